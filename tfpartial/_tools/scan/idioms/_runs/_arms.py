"""Which arm of an `if ... else` a train step is built in, when the other
arm builds another step: `if FLAGS.two_layers: minimize(loss, var_list=[W,
kernel2]) else: minimize(loss, var_list=[W, kernel1])` is one choice of
what to train, made once per run (greedy layer-wise training, a flag
choosing the head alone or the head and the last block). The two lists
never train together, so they are not a model's two halves trained side
by side (what either leaves out, the other does not train in the same
run); and a variable made only in the other arm is not one a list could
leave out.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _scopes

Position = Tuple[int, int]
# The `if` (by id) and its side (True: the body, False: the `else`).
Arm = Tuple[int, bool]


def arm(call: ast.AST, scope: _scopes.Scope, others: List[ast.AST]
        ) -> Optional[Arm]:
  """The innermost `if` of `scope` with `call` in one arm and one of
  `others` (steps of the same scope) in the other, and `call`'s side;
  None when there is none."""
  found: Optional[Arm] = None
  start = (0, 0)
  for node in _choices(scope):
    body, orelse = _holds(node.body, call), _holds(node.orelse, call)
    if not (body or orelse):
      continue
    opposite = node.orelse if body else node.body
    # The ifs holding `call` are nested: the one starting last is inside.
    if (node.lineno, node.col_offset) > start and any(
        _holds(opposite, other) for other in others):
      found, start = (id(node), body), (node.lineno, node.col_offset)
  return found


def exclusive(one: Optional[Arm], other: Optional[Arm]) -> bool:
  """Whether two arms are the two sides of one `if`."""
  return one is not None and other is not None and one[0] == other[0] and (
      one[1] != other[1])


def apart(scope: _scopes.Scope, one: Position, other: Position) -> bool:
  """Whether an `if` of `scope` holds the places `one` and `other` in
  its two arms (a variable made only where the step is not built)."""
  for node in _choices(scope):
    if (_spans(node.body, one) and _spans(node.orelse, other) or
        _spans(node.orelse, one) and _spans(node.body, other)):
      return True
  return False


def _choices(scope: _scopes.Scope) -> List[ast.If]:
  """The `if ... else` statements of `scope`, listed once per scope."""
  return scope.once((_choices, 0, 0), lambda: [
      n for n in scope.nodes if isinstance(n, ast.If) and n.orelse])


def _holds(body: List[ast.stmt], node: ast.AST) -> bool:
  """Whether the statements `body` span the place of `node`."""
  return _spans(body, (getattr(node, "lineno", 0),
                       getattr(node, "col_offset", 0)))


def _spans(body: List[ast.stmt], at: Position) -> bool:
  """Whether the statements `body` span the place `at`."""
  return (body[0].lineno, body[0].col_offset) <= at <= (
      getattr(body[-1], "end_lineno", 0) or 0,
      getattr(body[-1], "end_col_offset", 0) or 0)
