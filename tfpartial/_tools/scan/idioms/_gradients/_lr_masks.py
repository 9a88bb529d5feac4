"""An optimizer given an element-wise learning rate that a mask
multiplies (`Adam(learning_rate=lr * lr_mask[i]).minimize(loss,
var_list=w)`, `lr * (ones - mask)`), then stepping: where the mask is 0
the update is 0, so a learning-rate mask is a gradient mask (continual
learning keeping the weights of earlier tasks, PackNet-like retraining).
A rate times a schedule, a decay or a constant masks nothing."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels

# The calls that step with an optimizer's learning rate.
_STEPS = ("minimize", "apply_gradients")
# What passes a mask on unchanged in kind (`np.array(mask[i])`).
_THROUGH = {"array", "asarray", "constant", "convert_to_tensor", "cast",
            "float32"}


def masked(analysis: Analysis
           ) -> List[Tuple[Labels, _scopes.Scope, ast.Call]]:
  """(labels with the mask as `masked`, the scope, the step) of each step
  of an optimizer made with a learning rate a mask multiplies."""
  found: List[Tuple[Labels, _scopes.Scope, ast.Call]] = []
  for scope, call in analysis.calls_named(_STEPS):
    if not isinstance(call.func, ast.Attribute):
      continue
    made = _constructor(call.func.value, scope)
    rate = None if made is None else _rate(made)
    mask = None if rate is None else _mask_factor(rate)
    if mask is not None:
      found.append(({"masked": mask}, scope, call))
  return found


def _constructor(node: ast.expr, scope: _scopes.Scope
                 ) -> Optional[ast.Call]:
  """The optimizer's construction: chained, or the one value of a name."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    node = defs[0].value if len(defs) == 1 else node
  return node if isinstance(node, ast.Call) and (
      _names.call_name(node) or "").endswith(("Optimizer", "Adam", "SGD",
                                               "RMSprop", "Momentum")) \
      else None


def _rate(made: ast.Call) -> Optional[ast.expr]:
  given = next((k.value for k in made.keywords if k.arg in {
      "learning_rate", "lr"}), None)
  return given if given is not None else (made.args[0] if made.args
                                          else None)


def _mask_factor(rate: ast.expr) -> Optional[ast.expr]:
  """The factor of the product `rate` that reads a mask, or its
  complement (`ones - mask`)."""
  if not isinstance(rate, ast.BinOp) or not isinstance(rate.op, ast.Mult):
    return None
  for factor in (rate.left, rate.right):
    if _is_mask(factor, 0):
      return factor
    inner = _mask_factor(factor)
    if inner is not None:
      return inner
  return None


def _is_mask(node: ast.expr, depth: int) -> bool:
  """`mask`, `lr_mask[i]`, `np.array(mask[t][i])`, `1 - mask`."""
  if depth > 4:
    return False
  while isinstance(node, ast.Subscript):
    node = node.value
  if isinstance(node, ast.Name):
    return _names.is_mask_name(node.id)
  if isinstance(node, ast.Attribute):
    return _names.is_mask_name(node.attr)
  if isinstance(node, ast.Call) and _names.call_name(node) in _THROUGH:
    return bool(node.args) and _is_mask(node.args[0], depth + 1)
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
    return _is_mask(node.right, depth + 1)
  return False
