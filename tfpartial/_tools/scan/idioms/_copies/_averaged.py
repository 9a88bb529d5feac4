"""Whether a write sets a model to an average of its own weights and
another model's, both read as they are now: a mean teacher's or an EMA
model's update (`for t, s in zip(teacher.get_weights(),
student.get_weights()): new.append(a * t + (1 - a) * s)`, then
`teacher.set_weights(new)`). Every element of every weight moves by
numbers the same for all of them, and the values come from two live
models, none saved before a step: a second model computed from the
trained one, not saved values put back into a frozen part. A list that
mixes in a mask, a slice or a copy of the target itself taken earlier
(`saved`) is not one. Part of the writes `write-back` reads."""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Set, Tuple, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# The arithmetic of an average.
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
# How a model's weights are read out, all of them, as they are now.
_READS = frozenset({"get_weights"})


def averaged(call: ast.Call, scope: _scopes.Scope, target: ast.AST,
             value: ast.AST) -> bool:
  """Whether `call` is `target.set_weights(value)` and `value` is an
  average of two live models' weights (`from_two_models`)."""
  return _names.call_name(call) == "set_weights" and from_two_models(
      scope, target, value)


def from_two_models(scope: _scopes.Scope, target: ast.AST,
                    value: ast.AST) -> bool:
  """Whether `value`, written into the model `target`, is a list each
  entry of which mixes, by arithmetic and scalars, the entry of
  `target.get_weights()` with that of another model's `get_weights()`,
  both read in `scope`.

  >>> import ast
  >>> f = ast.parse('''
  ... def f(ema, model, d):
  ...   new = []
  ...   for e, w in zip(ema.get_weights(), model.get_weights()):
  ...     new.append(e * d + w * (1 - d))
  ...   ema.set_weights(new)''')
  >>> scope = list(_scopes.collect(f).all())[1]
  >>> from_two_models(scope, ast.Name("ema"), ast.Name("new"))
  True
  >>> from_two_models(scope, ast.Name("model"), ast.Name("new"))
  True
  >>> from_two_models(scope, ast.Name("other"), ast.Name("new"))
  False
  """
  own = _names.dotted(target)
  if own is None:
    return False
  if isinstance(value, ast.ListComp):
    return _mixes(scope, own, value.elt, value.generators)
  if not isinstance(value, ast.Name):
    return False
  # The list made once; its `append`s are kept as further (adding) defs.
  defs = [d for d in scope.defs.get(value.id, []) if d.replaces]
  if len(defs) != 1:
    return False
  made = defs[0].value
  if isinstance(made, ast.ListComp):
    return _mixes(scope, own, made.elt, made.generators)
  if not (isinstance(made, ast.List) and not made.elts):
    return False
  appends = _appends(scope, value.id)
  return bool(appends) and all(
      loop is not None and _mixes(scope, own, added, [loop])
      for added, loop in appends)


_Loop = Union[ast.For, ast.comprehension]


def _appends(scope: _scopes.Scope, name: str
             ) -> List[Tuple[Optional[ast.expr], Optional[ast.For]]]:
  """(value added, the `for` around it) of each use of the list `name`
  in `scope` other than a read: `name.append(x)`; a store of any other
  kind (`name[i] = x`, `name += x`) stands for None."""
  found: List[Tuple[Optional[ast.expr], Optional[ast.For]]] = []
  loops = [n for n in scope.nodes if isinstance(n, ast.For)]
  for node in scope.nodes:
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and isinstance(
            node.func.value, ast.Name) and node.func.value.id == name:
      if node.func.attr != "append" or len(node.args) != 1:
        return [(None, None)]
      around = [f for f in loops if _inside(f, node)]
      found.append((node.args[0], max(
          around, key=lambda f: f.lineno) if around else None))
    elif isinstance(node, (ast.Assign, ast.AugAssign)):
      targets = node.targets if isinstance(node, ast.Assign) else [
          node.target]
      if any(isinstance(t, ast.Subscript) and _names.root(t) == name
             or isinstance(node, ast.AugAssign) and isinstance(
                 t, ast.Name) and t.id == name for t in targets):
        return [(None, None)]
  return found


def _inside(loop: ast.For, node: ast.AST) -> bool:
  end = getattr(loop, "end_lineno", None) or loop.lineno
  return loop.lineno < getattr(node, "lineno", 0) <= end


def _mixes(scope: _scopes.Scope, own: str, added: Optional[ast.AST],
           loops: Sequence[_Loop]) -> bool:
  """Whether `added`, under the one loop `loops` over `zip(a, b)` (a
  `for` or a comprehension), mixes its two items by arithmetic and
  scalars, `a` and `b` the weights of `own` and of another model."""
  if len(loops) != 1 or added is None:
    return False
  loop = loops[0]
  items = loop.target
  if not (isinstance(items, ast.Tuple) and len(items.elts) == 2 and all(
      isinstance(e, ast.Name) for e in items.elts)):
    return False
  zipped = loop.iter
  if not (isinstance(zipped, ast.Call) and _names.call_name(zipped) == "zip"
          and len(zipped.args) == 2 and not zipped.keywords):
    return False
  models = [_weights_of(scope, a) for a in zipped.args]
  if None in models or own not in models or len(set(models)) != 2:
    return False
  names = [e.id for e in items.elts if isinstance(e, ast.Name)]
  if isinstance(added, ast.Name) and added.id not in names:
    # `new_w = a * t + (1 - a) * s; new.append(new_w)`, in the loop.
    defs = scope.defs.get(added.id, [])
    if len(defs) != 1 or id(loop) not in defs[0].where.loops:
      return False
    added = defs[0].value
  return _arithmetic(added, set(names))


def _weights_of(scope: _scopes.Scope, node: ast.AST) -> Optional[str]:
  """The model `m` of `m.get_weights()`, or of a name assigned from it
  once in `scope`."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    if len(defs) != 1:
      return None
    node = defs[0].value
  if isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr in _READS and not (
          node.args or node.keywords):
    return _names.dotted(node.func.value)
  return None


def _arithmetic(node: ast.AST, items: Set[str]) -> bool:
  """Whether `node` reads both `items`, each whole, by arithmetic with
  numbers and settings (names, attributes) and nothing else: no call, no
  element chosen."""
  read: Set[str] = set()
  for part in ast.walk(node):
    if isinstance(part, ast.Name) and part.id in items:
      read.add(part.id)
    elif isinstance(part, ast.BinOp) and not isinstance(part.op, _OPS):
      return False
    elif isinstance(part, (ast.Call, ast.Subscript, ast.Lambda,
                           ast.IfExp, ast.Compare)):
      return False
  return read == items
