"""A re-mask spelled as a subtraction: `w.assign_sub(w * (1 - m))` (or
`tf.assign_sub(w, (1 - m) * w)`, with `tf.multiply`) leaves `w * m`, the
same write as `w.assign(w * m)`. Only the variable times a complement
counts: weight decay (`w.assign_sub(wd * w)`) takes off a scale, not the
elements a mask drops, and a complement of a rate (`1 - decay`) is told
from a mask's by the flow afterwards, as for `assign`."""

from __future__ import annotations

import ast
from typing import Optional, Tuple

from tfpartial._tools.scan import _names


def taken_off(call: ast.Call) -> Optional[Tuple[ast.expr, ast.expr]]:
  """(target, value) of `assign_sub` taking the variable times a
  complement off itself, or None."""
  receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
  if len(call.args) == 1 and receiver is not None and not call.keywords:
    target, value = receiver, call.args[0]
  elif len(call.args) == 2:
    target, value = call.args
  else:
    return None
  spelled = _names.dotted(target)
  factors = _names.factors(value)
  if spelled is None or len(factors) != 2:
    return None
  for own, other in (factors, factors[::-1]):
    if _names.dotted(own) == spelled and _complement(other):
      return target, value
  return None


def _complement(node: ast.expr) -> bool:
  """`1 - m`, `1. - m`, `tf.subtract(1, m)`."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
    left = node.left
  elif isinstance(node, ast.Call) and _names.call_name(node) == (
      "subtract") and len(node.args) == 2:
    left = node.args[0]
  else:
    return False
  return isinstance(left, ast.Constant) and not isinstance(
      left.value, (str, bool)) and left.value == 1
