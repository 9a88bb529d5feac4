"""Whether two places of one function run in different runs: each in an
arm of an `if` testing the same thing, in opposite arms (`if gan_weight
<= 0: minimize(g_loss) else: minimize(g_loss, var_list=g_vars)`, and
later `if gan_weight <= 0: d_op = no_op() else: minimize(d_loss,
var_list=d_vars)`: the whole generator trains only where the
discriminator does not). Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Set, Tuple

from tfpartial._tools.scan import _scopes

Position = Tuple[int, int]


def exclusive(scope: _scopes.Scope, one: Position, other: Position
              ) -> bool:
  """Whether `one` and `other` are in opposite arms of `if`s of `scope`
  with the same test (one `if`, or two testing the same text)."""
  mine = _arms_of(scope, one)
  return any((test, not side) in mine for test, side in _arms_of(
      scope, other))


def _arms_of(scope: _scopes.Scope, at: Position) -> Set[Tuple[str, bool]]:
  """The tests of the `if ... else` statements holding `at`, each with
  the side holding it (True: the body)."""
  return {(test, side) for start, end, test, side in _arms(scope)
          if start <= at <= end}


def _arms(scope: _scopes.Scope
          ) -> List[Tuple[Position, Position, str, bool]]:
  """Each arm of the `if ... else` statements of `scope`: where it
  starts and ends, the test's text, its side; read once per scope."""
  return scope.once((_arms, None, 0), lambda: [
      ((body[0].lineno, body[0].col_offset),
       (getattr(body[-1], "end_lineno", 0) or 0,
        getattr(body[-1], "end_col_offset", 0) or 0),
       ast.unparse(node.test), side)
      for node in scope.nodes if isinstance(node, ast.If) and node.orelse
      for side, body in ((True, node.body), (False, node.orelse))])
