"""A layer's weights read out, passed through a helper of the project
that writes a number into chosen elements of the array it is given
(`w[c, c, :, i] = -1`, Bayar's constrained convolution) and returns it,
and set back with `set_weights` while the model trains (a callback's
`on_batch_end`): those elements are set back to a fixed value after each
step and never learn. Part of `weight-remask`.

Silent: positions the array's own values choose (`w[w < 0] = 0`, a
projection), a helper that only rescales (no element fixed), zeros at
positions the shapes alone give (connectivity, as in `_constraint_fills`),
a write once before training (or of an initial value made there) and
one that only evaluates (`in_training`).
The helper's judgement is cached per function, so the work grows with the
number of `set_weights` calls and the helpers they reach."""

from __future__ import annotations

import ast
import functools
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._copies import _in_training
from tfpartial._tools.scan.idioms._copies import _writes
from tfpartial._tools.scan.idioms._masks import _row_resets


def helper_fills(analysis: Analysis) -> List[_writes.WriteHit]:
  """A `weight-remask` hit for each `set_weights` of values made, from the
  weights read out, by a helper that fixes chosen elements to a number."""
  hits: List[_writes.WriteHit] = []
  for scope, call in analysis.calls_named(("set_weights",)):
    if len(call.args) != 1 or analysis.module(scope).is_test or not (
        isinstance(call.func, ast.Attribute)):
      continue
    fill = _filled_by_helper(call.args[0], scope, analysis)
    if fill is None or not _in_training.in_training(
        scope, analysis, call) or not _row_resets.repeated(
            call, scope, analysis):
      continue
    hits.append(_writes.WriteHit(call, scope, call, {}, "weight-remask",
                                 call.func.value, fill))
  return hits


def is_number(node: Optional[ast.AST]) -> bool:
  """`-1`, `0.5`: a number spelled in the code."""
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub,
                                                            ast.UAdd)):
    node = node.operand
  return isinstance(node, ast.Constant) and isinstance(
      node.value, (int, float)) and not isinstance(node.value, bool)


def _filled_by_helper(value: ast.AST, scope: _scopes.Scope,
                      analysis: Analysis) -> Optional[ast.AST]:
  """The number a helper of the project writes into the array that
  `value` is made from (through the local names it reads), if any: the
  helper is called on a name and its result is what is written."""
  flow = analysis.flow
  for item in _scopes.made_from(value, scope):
    if not (isinstance(item, ast.Call) and len(item.args) == 1) or (
        flow.callee(item, scope) is None) or not any(
            k.startswith("copy:") for k in flow.labels(item.args[0], scope)):
      continue  # Not the weights read out: an initial value made here.
    function = flow.callee(item, scope)
    if isinstance(function, ast.FunctionDef):
      fill = analysis.once(f"helper fills {id(function)}",
                           functools.partial(_fills_its_argument, function))
      if isinstance(fill, ast.AST):
        return fill
  return None


def _fills_its_argument(function: ast.FunctionDef) -> Optional[ast.AST]:
  """The number `function` writes into elements of its one parameter at
  positions its values do not choose, returning that parameter
  (`def fix(w): w[c, c] = -1; return w`); zeros count only at positions
  spelled as numbers."""
  if len(function.args.args) != 1:
    return None
  weight = function.args.args[0].arg
  returned = [n.value for n in ast.walk(function)
              if isinstance(n, ast.Return)]
  if not returned or not all(isinstance(r, ast.Name) and r.id == weight
                             for r in returned):
    return None
  fill: Optional[ast.AST] = None
  for node in ast.walk(function):
    if isinstance(node, (ast.Assign, ast.AugAssign)) and any(
        isinstance(t, ast.Name) and t.id == weight for t in (
            node.targets if isinstance(node, ast.Assign) else [node.target])):
      return None  # Rebound: what is returned is not the array given.
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
      continue
    target = node.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(
        target.value, ast.Name) and target.value.id == weight) or not (
            is_number(node.value)):
      continue
    if _values_chosen(target.slice, weight):
      return None  # `w[w < 0] = 0`: a projection, chosen anew.
    if _names.is_zero(node.value) and not _literal(target.slice):
      continue  # Zeros where the shapes say: connectivity.
    fill = node.value
  return fill


def _values_chosen(index: ast.AST, weight: str) -> bool:
  """Whether `index` reads the values of `weight`, not only its shape."""
  shaped = set()
  for item in ast.walk(index):
    if isinstance(item, ast.Attribute) and item.attr in {"shape", "ndim",
                                                         "dtype"}:
      shaped |= {id(n) for n in ast.walk(item)}
  return any(isinstance(n, ast.Name) and n.id == weight and id(
      n) not in shaped for n in ast.walk(index))


def _literal(index: ast.AST) -> bool:
  """Whether `index` holds a number spelled in the code (`w[0]`)."""
  return any(is_number(n) for n in ast.walk(index))
