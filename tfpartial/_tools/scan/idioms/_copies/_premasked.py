"""A copy of the frozen values stored already masked (`frozen.assign(w *
(1 - m))` when the mask is updated) and put back as `w.assign(w * m +
frozen)`: the kept elements of the variable, plus the saved values of the
others (PackNet's restore after each step, written by hand)."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow


def saved(target: ast.AST, value: ast.AST, scope: _scopes.Scope,
          flow: Flow) -> Optional[ast.expr]:
  """The saved values `s` of `w * m + s` (either order) written into `w`,
  when `m` is a mask and `s` a non-trainable variable (not a gradient or
  an update: a soft update adds the other network's values times a
  rate)."""
  mine = _names.dotted(target)
  if mine is None or not isinstance(value, ast.BinOp) or not isinstance(
      value.op, ast.Add):
    return None
  for product, other in ((value.left, value.right),
                         (value.right, value.left)):
    if not isinstance(product, ast.BinOp) or not isinstance(
        product.op, ast.Mult) or not isinstance(other, (
            ast.Name, ast.Attribute, ast.Subscript)):
      continue
    factors = [product.left, product.right]
    masks = [f for f in factors if _names.dotted(f) != mine]
    if len(masks) != 1 or _names.dotted(other) == mine:
      continue
    kept, mask = flow.labels(other, scope), flow.labels(masks[0], scope)
    if "shadow" in kept and "mask" in mask and not set(kept) & {
        "grad", "masked"}:
      return other
  return None
