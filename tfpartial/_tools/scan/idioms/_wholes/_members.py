"""What a loss reads through its object's members: `self.loss =
tf.reduce_mean(tf.square(self.z_vector - self.E))` where `self.E =
self.img_encoder(self.view)` and `self.view = tf.placeholder(...)`, set
in the methods of the class of the step's function. `_own_loss` follows
these as it follows local names, so a loss kept on `self` that reads
only the network its filter keeps (an image encoder trained to match
codes fed in, the rest of the graph built for testing) is told from one
that reads a network left out. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_MOST = 3  # Assignments followed: a member set in many places is not read.


def held(node: ast.Attribute, home: _scopes.Scope
         ) -> Optional[List[Tuple[ast.expr, _scopes.Scope]]]:
  """The values `self.x` (`node`) is given in the methods of the class
  of `home`'s function, with their scopes; None where that is unknown
  (no class, no assignment, too many, or a list or dict filled later)."""
  dotted = _names.dotted(node) or ""
  if dotted.count(".") != 1 or not dotted.startswith("self."):
    return None
  info = _scopes.enclosing_class(home)
  if info is None:
    return None
  values = info.attributes.get(dotted, [])
  if not values or len(values) > _MOST or any(isinstance(
      value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp))
                                              for value, _ in values):
    return None
  return list(values)


# Calls that fill a list in place.
_FILLS = {"append", "extend", "insert", "__iadd__"}


def comprehended(node: ast.Attribute, home: _scopes.Scope
                 ) -> Optional[List[Tuple[ast.expr, _scopes.Scope]]]:
  """The comprehensions `self.x` (`node`) is set to (`self.regs = [r for
  r in all_regs if 'cls' in r.name]`), when no method of the class fills
  it later (`self.x.append`, `self.x += ...`); else None."""
  dotted = _names.dotted(node) or ""
  info = _scopes.enclosing_class(home)
  if info is None or dotted.count(".") != 1 or not dotted.startswith(
      "self."):
    return None
  values = info.attributes.get(dotted, [])
  if not values or len(values) > _MOST or not all(isinstance(
      value, (ast.ListComp, ast.GeneratorExp)) for value, _ in values):
    return None
  for method in info.methods.values():
    for n in ast.walk(method.node):
      if isinstance(n, ast.AugAssign) and _names.dotted(n.target) == dotted \
          or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
          and n.func.attr in _FILLS and _names.dotted(n.func.value) == dotted:
        return None
  return list(values)


def one_value(node: ast.expr, home: _scopes.Scope) -> ast.expr:
  """What `node` holds when a name of `home` or a member of its class
  is set once (`t_vars = tf.trainable_variables()`; `self.vars = ...`),
  else `node`."""
  if isinstance(node, ast.Name):
    defs = home.defs.get(node.id, [])
    return defs[0].value if len(defs) == 1 else node
  values = held(node, home) if isinstance(node, ast.Attribute) else None
  return values[0][0] if values is not None and len(values) == 1 else node
