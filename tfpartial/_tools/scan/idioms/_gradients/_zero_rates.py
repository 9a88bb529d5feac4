"""A hand-written optimizer stepping each variable by a rate (or gate)
set to 0 for the variables its name picks (`if name.startswith(
"encoder/layer_"): rate = schedule(...) else: rate = 0.0`), the rate a
factor of the whole update it writes (`param.assign(param - rate * lr *
update)`): the variables named never move, a gradient mask by name
(layer-wise warm-up, progressive transfer). A zero rate in a schedule of
every variable (a test of the step), or a zero term of the update (a
weight decay excluded for the biases) freezes no part."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _zero_choice
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels

_WRITES = {"assign", "assign_sub"}


def masked(analysis: Analysis
           ) -> List[Tuple[Labels, _scopes.Scope, ast.Call]]:
  """(labels with the product as `masked`, the optimizer's method, the
  write) of each update a rate zeroed by the variable's name multiplies."""
  found: List[Tuple[Labels, _scopes.Scope, ast.Call]] = []
  for scope in analysis.functions_named(_names.OPTIMIZER_METHODS):
    if scope.cls is None:
      continue
    for call in analysis.calls(scope):
      if _names.call_name(call) not in _WRITES or not call.args:
        continue
      value: Optional[ast.expr] = call.args[-1]
      if _names.call_name(call) == "assign" and value is not None:
        value = value.right if isinstance(value, ast.BinOp) and isinstance(
            value.op, ast.Sub) else _subtracted(value, scope)
      product = None if value is None else _zeroed(value, scope, set(), 0)
      if product is not None:
        found.append(({"masked": product}, scope, call))
  return found


def _subtracted(value: ast.expr, scope: _scopes.Scope
                ) -> Optional[ast.expr]:
  """What `next_param = param - update` subtracts, for `assign(next_param)`."""
  if not isinstance(value, ast.Name):
    return None
  defs = scope.defs.get(value.id, [])
  made = defs[0].value if len(defs) == 1 else None
  return made.right if isinstance(made, ast.BinOp) and isinstance(
      made.op, ast.Sub) else None


def _zeroed(node: ast.expr, scope: _scopes.Scope, seen: Set[str],
            depth: int) -> Optional[ast.expr]:
  """The product, among the factors of `node` (followed through names),
  one of whose factors is a name set to 0 under a test of a name."""
  if depth > 4:
    return None
  if isinstance(node, ast.Name) and node.id not in seen:
    defs = scope.defs.get(node.id, [])
    if len(defs) == 1:
      return _zeroed(defs[0].value, scope, seen | {node.id}, depth + 1)
    return None
  if not isinstance(node, ast.BinOp) or not isinstance(
      node.op, (ast.Mult, ast.Div)):
    return None
  factors = [node.left] if isinstance(node.op, ast.Div) else [
      node.left, node.right]
  for factor in factors:
    if isinstance(factor, ast.Name) and _zero_by_name(factor.id, scope):
      return node
    inner = _zeroed(factor, scope, seen, depth + 1)
    if inner is not None:
      return inner
  return None


def _zero_by_name(name: str, scope: _scopes.Scope) -> bool:
  """Whether `name` is set to 0 in an arm of an `if` testing a name
  (`param.name`, `param_name`) and to something else elsewhere."""
  return _zero_choice.zero_in_an_arm(name, scope, _tests_a_name)


def _tests_a_name(test: Optional[ast.AST]) -> bool:
  return test is not None and any(
      isinstance(n, ast.Attribute) and n.attr == "name" or isinstance(
          n, ast.Name) and n.id.endswith("name") for n in ast.walk(test))
