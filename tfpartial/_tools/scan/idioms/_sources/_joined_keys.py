"""Key tests joined by `and` (`'conv' not in key and 'stepsize' not in
key`): a test of a key's text as each of its parts is, for the keys a
step's `[params[k] for k in keys]` takes (`_keyed`). Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Callable


def joined(test: ast.expr, names_a_key: Callable[[ast.expr], bool]) -> bool:
  """Whether `test` is an `and` of tests each of which `names_a_key`."""
  return isinstance(test, ast.BoolOp) and isinstance(
      test.op, ast.And) and all(names_a_key(each) for each in test.values)
