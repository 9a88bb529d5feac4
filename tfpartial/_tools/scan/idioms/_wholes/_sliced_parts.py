"""Whether the slices of one list that a function's steps train leave
its head or its tail out: `minimize(loss, var_list=tf.trainable_variables
()[2:-2])` beside `minimize(loss, var_list=tf.trainable_variables()[-2:])`
(a lower rate for the body, a higher one for the output layer) trains no
slice that starts at the first variable, so the first two (embedding
tables made first) stay fixed. Slices that meet end to end (`[:-2]` and
`[-2:]`, two learning rates) train everything. Part of
`var-list-filter`: two filters of one function are otherwise read as
parts that may train the model between them."""

from __future__ import annotations

import ast
from typing import Iterable, List, Optional, Set



def leaves_out(texts: Iterable[str]) -> bool:
  """Whether `texts` (the filters of one function, as written) are all
  slices of one list and none starts at its first element, or none runs
  to its end, or (a bound not a constant) one starts where none ends."""
  slices = _slices_of_one_list(texts)
  if slices is None:
    return False
  starts = any(s.lower is None or _constant(s.lower) == 0 for s in slices)
  ends = any(s.upper is None for s in slices)
  if all(_constant(bound) is not None or bound is None
         for s in slices for bound in (s.lower, s.upper)):
    return not (starts and ends)
  return not (starts and ends and _meet(slices))


def covers(texts: Iterable[str]) -> bool:
  """Whether `texts` are two or more slices of one list, one from its
  first element, one to its end, each of the others starting where one
  ends as written (`[0:n]` and `[n:]`): together, the whole list."""
  slices = _slices_of_one_list(texts)
  return slices is not None and any(
      s.lower is None or _constant(s.lower) == 0 for s in slices) and any(
          s.upper is None for s in slices) and _meet(slices)


def _slices_of_one_list(texts: Iterable[str]) -> Optional[List[ast.Slice]]:
  """The slices `texts` write, when they are two or more step-less slices
  of one list as written (`tf.trainable_variables()[2:-2]`), else None."""
  slices: List[ast.Slice] = []
  bases: Set[str] = set()
  for text in texts:
    try:
      node = ast.parse(text, mode="eval").body
    except SyntaxError:
      return None  # A name's filter, marked with where it is added.
    if not isinstance(node, ast.Subscript) or not isinstance(
        node.slice, ast.Slice) or node.slice.step is not None:
      return None
    slices.append(node.slice)
    bases.add(ast.unparse(node.value))
  return slices if len(bases) == 1 and len(slices) > 1 else None


def _meet(slices: List[ast.Slice]) -> bool:
  """Whether each slice that starts past the first element starts where
  another ends, as written (`[0:n]` and `[n:]`, a flag's layer count;
  not `[0:n]` and `[18:]`, which leave the band between out)."""
  ends = {ast.unparse(s.upper) for s in slices if s.upper is not None}
  return all(ast.unparse(s.lower) in ends for s in slices
             if s.lower is not None and _constant(s.lower) != 0)


def _constant(node: Optional[ast.expr]) -> Optional[int]:
  """The integer `node` writes (`2`, `-2`), else None."""
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
    inner = _constant(node.operand)
    return -inner if inner is not None else None
  if isinstance(node, ast.Constant) and isinstance(node.value, int) and (
      not isinstance(node.value, bool)):
    return node.value
  return None
