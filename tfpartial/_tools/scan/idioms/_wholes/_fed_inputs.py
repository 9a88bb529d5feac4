"""Whether a step trains inputs set from data, not weights: every
variable of its list (`var_list=[self.slack]`) is written by an assign
from a placeholder (`tf.assign(self.slack, self.assign_slack)`, fed a
batch of images before the steps run). An attack (EAD, C&W) optimises
such a copy of each batch; the model it runs was never in the list, and
no part of a variable is frozen. A variable no placeholder writes (a
soft prompt, a new token's embedding) stays a candidate.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_PLACEHOLDERS = {"placeholder", "placeholder_with_default"}
# `self.x` -> (value, the method's scope): `ClassInfo.attributes`.
_Attributes = Dict[str, List[Tuple[ast.expr, _scopes.Scope]]]


def set_from_feeds(var_list: Optional[ast.AST], scope: _scopes.Scope
                   ) -> bool:
  """Whether `var_list` is a list display of `self.` variables of the
  step's class, each written by an assign from a placeholder."""
  info = _scopes.enclosing_class(scope)
  if info is None or not isinstance(var_list, (ast.List, ast.Tuple)) or (
      not var_list.elts):
    return False
  attributes = info.attributes
  written = _written_from(attributes)
  return all(_own(each) is not None and _own(each) in written and any(
      _placeholder(source, attributes) for source in written[str(_own(each))])
             for each in var_list.elts)


def _own(node: ast.AST) -> Optional[str]:
  """`x` of `self.x`."""
  if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self":
    return node.attr
  return None


def _written_from(attributes: _Attributes
                  ) -> Dict[str, List[ast.expr]]:
  """`self.x` -> what the class's assigns write into it
  (`tf.assign(self.x, v)`, `self.x.assign(v)`), among the values it
  keeps on `self`."""
  found: Dict[str, List[ast.expr]] = {}
  for values in attributes.values():
    for value, _ in values:
      for node in ast.walk(value):
        if not isinstance(node, ast.Call) or _names.call_name(
            node) != "assign":
          continue
        if isinstance(node.func, ast.Attribute) and _own(
            node.func.value) is not None and len(node.args) == 1:
          target, source = node.func.value, node.args[0]
        elif len(node.args) == 2:
          target, source = node.args
        else:
          continue
        name = _own(target)
        if name is not None:
          found.setdefault(name, []).append(source)
  return found


def _placeholder(source: ast.expr,
                 attributes: _Attributes
                 ) -> bool:
  """Whether `source` is `self.y` that the class sets to a placeholder."""
  name = _own(source)
  return name is not None and any(
      isinstance(value, ast.Call) and _names.call_name(value) in _PLACEHOLDERS
      for value, _ in attributes.get(f"self.{name}", ()))
