"""Gradients zeroed by a map of multipliers: `gradient_multipliers=
{var: 0.0}` given to `tf.contrib.layers.optimize_loss` or slim's
`create_train_op`, or `multiply_gradients(grads_and_vars, {var: 0.0})`
of `tf.contrib.training` / slim: the named variables' gradients are
multiplied by 0 before they are applied, a gradient mask by variable.
A map of rates that are never 0 (a slower learning rate for a pretrained
body) freezes nothing.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels

# The calls taking a map of multipliers, and where they take it.
_KEYWORD = "gradient_multipliers"
_CALLS = ("optimize_loss", "create_train_op", "multiply_gradients")


def masked(analysis: Analysis
           ) -> List[Tuple[Labels, _scopes.Scope, ast.Call]]:
  """(labels with the map as `masked`, the scope, the call) of each call
  given a map of multipliers one of which is 0."""
  found: List[Tuple[Labels, _scopes.Scope, ast.Call]] = []
  for scope, call in analysis.calls_named(_CALLS):
    given = [k.value for k in call.keywords if k.arg == _KEYWORD]
    if _names.call_name(call) == "multiply_gradients" and len(
        call.args) >= 2:
      given.append(call.args[1])
    for each in given:
      zeroed = _with_a_zero(each, scope, 0)
      if zeroed is not None:
        found.append(({"masked": zeroed}, scope, call))
  return found


def _with_a_zero(node: ast.expr, scope: _scopes.Scope, depth: int
                 ) -> Optional[ast.expr]:
  """The map (a dict, a dict comprehension, or a local name bound to
  one or filled by `m[v] = 0.0`) when one of its values is 0, else
  None."""
  if isinstance(node, ast.Dict):
    return node if any(v is not None and _calls.zero(v, scope)
                       for v in node.values) else None
  if isinstance(node, ast.DictComp):
    return node if _calls.zero(node.value, scope) else None
  if not isinstance(node, ast.Name) or depth > 2:
    return None
  for item in scope.nodes:
    if isinstance(item, ast.Assign) and _calls.zero(item.value, scope) and (
        any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
            and t.value.id == node.id for t in item.targets)):
      return item.value  # `multipliers[var] = 0.0`.
  for each in scope.defs.get(node.id, []):
    if each.value is not None:
      zeroed = _with_a_zero(each.value, scope, depth + 1)
      if zeroed is not None:
        return zeroed
  return None
