"""What a write puts back of values saved before the step, read in the
forms real code spells it: one mask beside the live weights and its
complement beside the copy (`m * w + (1 - m) * copy`, either way round),
the step's change masked and added back onto the saved values (`before
+ (after - before) * m`, a federated client's projected update), each
element chosen by a mask from the values after the step or the ones
saved (`[where(m, after, before) ...]`). A rate in place of the mask
(Reptile's `before + (after - before) * eps`), a guard on the step's
values (`where(isnan(a), before, a)`) or a fill are not these."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names


def complements(mine: str, theirs: str) -> bool:
  """Whether one of two masks, as text, is the other's complement
  (`1 - m` beside `m`, in either place)."""
  return mine != theirs and (mine.endswith(theirs) or theirs.endswith(mine))


def masked_change(product: Optional[ast.AST]) -> bool:
  """Whether `product` masks a difference of two values (`(after -
  before) * m`): the step's change kept in some elements, added back to
  the saved values (`before + (after - before) * m`), not the weights
  masked."""
  factors = [product.left, product.right] if isinstance(
      product, ast.BinOp) and isinstance(product.op, ast.Mult) else []
  return any(isinstance(f, ast.BinOp) and isinstance(f.op, ast.Sub) and not (
      isinstance(f.left, ast.Constant)) and not isinstance(
          f.right, ast.Constant) for f in factors)


def chosen_each(value: Optional[ast.AST]) -> bool:
  """`where(m, a, b)` (or a list of them) with two values, no constant,
  a condition that reads neither: each element chosen from one or the
  other by a mask (not a fill, `where(isnan(w), 0, w)`, nor a guard on
  the values, `where(isnan(a), b, a)`)."""
  if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
    value = value.elt
  if not isinstance(value, ast.Call) or _names.call_name(value) not in {
      "where", "where_v2", "select"} or len(value.args) != 3:
    return False
  test, *chosen = value.args
  read = {n.id for a in chosen for n in ast.walk(a)
          if isinstance(n, ast.Name)}
  return not any(isinstance(a, ast.Constant) or _names.is_zero(a)
                 for a in chosen) and not any(
      isinstance(n, ast.Name) and n.id in read for n in ast.walk(test))
