"""Filters that only drop a layer's moving statistics.

`[v for v in variables if 'moving' not in v.name]` leaves out batch
norm's moving mean and variance, which no optimizer trains anyway: the
list is what it was given (the flow's reading of a property returning
one, and the idioms' of a step's list, both read it so).

>>> import ast
>>> looked_through(ast.parse("[v for v in vs if 'moving' not in v.name]",
...                          mode="eval").body).id
'vs'
"""

from __future__ import annotations

import ast
from typing import Optional

# The words a name test of moving statistics starts with.
_WORDS = ("moving", "ema", "exponentialmovingaverage")


def _statistics_only(test: ast.expr) -> bool:
  """Whether a test only drops names of moving statistics (`'moving'
  not in x.name`)."""
  compares = [n for n in ast.walk(test) if isinstance(n, ast.Compare)]
  if not compares or not isinstance(test, ast.Compare):
    return False
  texts = [side.value for side in [test.left, *test.comparators]
           if isinstance(side, ast.Constant) and isinstance(side.value, str)]
  return len(compares) == 1 and bool(texts) and all(
      isinstance(op, ast.NotIn) for op in test.ops) and all(
          text.lower().startswith(_WORDS) for text in texts)


def looked_through(expr: ast.AST) -> Optional[ast.expr]:
  """What a comprehension that only drops moving statistics keeps from
  (its one source), or None for any other expression."""
  if not isinstance(expr, (ast.ListComp, ast.GeneratorExp)) or len(
      expr.generators) != 1:
    return None
  generator = expr.generators[0]
  if not generator.ifs or not all(_statistics_only(t) for t in generator.ifs):
    return None
  return generator.iter
