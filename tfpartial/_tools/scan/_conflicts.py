"""A file committed with git's unresolved merge-conflict markers: Python
refuses the whole file for the marker lines, and every freeze in it is
hidden. Read with both sides of each conflict kept and the marker lines
blank, when that parses (as the two sides of a conflict at the top level
or in one block mostly do) and the two sides bind no name in common (else
the second would hide the first; `_reread`); otherwise read twice, once
on the first side of each conflict and once on the second, each a
version of the file, and the findings of either reported. Every line
stays where it was; a diff3 base (`|||||||` up to `=======`) is never
read. Markers that one string holds whole (a docstring showing a
conflict) are text, not a conflict.

>>> text = ("a = 1\\n<<<<<<< HEAD\\nb = 2\\n=======\\nb = 3\\n"
...         ">>>>>>> 7952aca\\nc = b\\n")
>>> print(version(text, found(text), SECOND), end="")
a = 1
<BLANKLINE>
<BLANKLINE>
<BLANKLINE>
b = 3
<BLANKLINE>
c = b
>>> found("a = 1\\n")
[]
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from typing import List, NamedTuple, Optional, Set, Tuple

# Git writes each marker at the start of a line, seven characters long.
_OPEN = re.compile(r"<{7}(?:[ \t].*)?$")
_BASE = re.compile(r"\|{7}(?:[ \t].*)?$")
_MIDDLE = re.compile(r"={7}\s*$")
_CLOSE = re.compile(r">{7}(?:[ \t].*)?$")

# Which lines a reading keeps: both sides, the first, the second.
BOTH, FIRST, SECOND = "both", "first", "second"


class Conflict(NamedTuple):
  """The lines (from 0) of one complete conflict's markers, and whether
  no other conflict lies around it."""

  open: int
  base: Optional[int]
  middle: int
  close: int
  outermost: bool = True


def found(text: str) -> List[Conflict]:
  """The complete conflicts of `text` (an inner one first), in one pass
  over its lines; none that one string holds whole, from before its
  opening marker to after its closing one (a docstring showing a
  conflict): a conflict on a docstring's first line is one."""
  lines = text.split("\n")
  done: List[Conflict] = []
  # The conflicts open around the line: their opening lines, and for
  # each [base, middle] (None until seen).
  opened: List[int] = []
  stack: List[List[Optional[int]]] = []
  for number, line in enumerate(lines):
    if _OPEN.match(line):
      opened.append(number)
      stack.append([None, None])
    elif not stack:
      continue
    elif _BASE.match(line) and stack[-1] == [None, None]:
      stack[-1][0] = number
    elif _MIDDLE.match(line) and stack[-1][1] is None:
      stack[-1][1] = number
    elif _CLOSE.match(line):
      start, (base, middle) = opened.pop(), stack.pop()
      if middle is not None:
        done.append(Conflict(start, base, middle, number, not stack))
  if not done:
    return []
  strings = _strings(text)
  starts = [s[0] for s in strings]
  return [c for c in done if not _held(c, strings, starts)]


def _held(conflict: Conflict, strings: List[Tuple[int, float]],
          starts: List[int]) -> bool:
  """Whether one of `strings` (sorted, apart) holds `conflict` whole."""
  at = bisect.bisect_left(starts, conflict.open) - 1
  return at >= 0 and strings[at][1] > conflict.close


def version(text: str, conflicts: List[Conflict], keep: str) -> str:
  """`text` read on `keep`'s side of each conflict, line for line: the
  marker lines, the diff3 bases and the sides not kept blank."""
  lines = text.split("\n")
  # How many conflicts around each line hold it on their first side,
  # their base, their second side (summed from where each part starts).
  change = [[0, 0, 0] for _ in range(len(lines) + 1)]
  blank: Set[int] = set()
  for c in conflicts:
    parts = ((c.open, c.base if c.base is not None else c.middle),
             (c.base, c.middle), (c.middle, c.close))
    for side, (start, end) in enumerate(parts):
      if start is not None:
        change[start + 1][side] += 1
        change[end][side] -= 1
    blank.update(m for m in (c.open, c.base, c.middle, c.close)
                 if m is not None)
  dropped = {BOTH: (1,), FIRST: (1, 2), SECOND: (0, 1)}[keep]
  around = [0, 0, 0]
  out = []
  for number, line in enumerate(lines):
    around = [a + d for a, d in zip(around, change[number])]
    kept = number not in blank and not any(around[s] for s in dropped)
    out.append(line if kept else "")
  return "\n".join(out)


def spans(conflicts: List[Conflict]) -> str:
  """The lines (from 1) of each outermost conflict, as a note says them.

  >>> spans([Conflict(0, None, 2, 4), Conflict(9, 11, 12, 14)])
  '1-5, 10-15'
  """
  outer = [c for c in conflicts if c.outermost]
  return ", ".join(f"{c.open + 1}-{c.close + 1}"
                   for c in sorted(outer, key=lambda c: c.open))


def _strings(text: str) -> List[Tuple[int, float]]:
  """The first and last lines (from 0) of each string spanning lines, in
  order; past where the text stops tokenizing, a string left open runs to
  the end (inf). Tokenizing stops at an indentation it refuses too: the
  strings past that are not known, and markers in them are taken for a
  conflict."""
  spans: List[Tuple[int, float]] = []
  try:
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
      if token.type == tokenize.STRING and token.end[0] > token.start[0]:
        spans.append((token.start[0] - 1, token.end[0] - 1))
  except tokenize.TokenError as error:
    where = error.args[1] if len(error.args) > 1 else None
    if "string" in str(error.args[0]) and isinstance(where, tuple):
      spans.append((where[0] - 1, float("inf")))
  except SyntaxError:  # An indentation tokenize refuses: no more known.
    pass
  return spans
