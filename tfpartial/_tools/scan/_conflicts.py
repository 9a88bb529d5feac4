"""A file committed with git's unresolved merge-conflict markers: Python
refuses the whole file for the marker lines, and every freeze in it is
hidden. Read on the first side of each conflict (`<<<<<<< HEAD` up to
`=======`, or to a diff3 `|||||||` base), the marker lines and the other
sides blank, so every line stays where it was. What it finds is read from
one side of code that cannot run as committed, and says so.

>>> print(first_side("a = 1\\n<<<<<<< HEAD\\nb = 2\\n=======\\nb = 3\\n"
...                  ">>>>>>> 7952aca\\nc = b\\n"), end="")
a = 1
<BLANKLINE>
b = 2
<BLANKLINE>
<BLANKLINE>
<BLANKLINE>
c = b
>>> first_side("a = 1\\n") is None
True
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

# Git writes each marker at the start of a line, seven characters long.
_OPEN = re.compile(r"<{7}(?:[ \t].*)?$")
_BASE = re.compile(r"\|{7}(?:[ \t].*)?$")
_MIDDLE = re.compile(r"={7}\s*$")
_CLOSE = re.compile(r">{7}(?:[ \t].*)?$")


def first_side(text: str) -> Optional[str]:
  """`text` with each complete conflict read on its first side, line for
  line; None when it holds no complete conflict (a lone `=======` is a
  docstring's underline, not a conflict)."""
  lines = text.split("\n")
  out: List[str] = []
  kept = False
  number = 0
  while number < len(lines):
    end = _conflict_end(lines, number) if _OPEN.match(lines[number]) else None
    if end is None:
      out.append(lines[number])
      number += 1
      continue
    keep = True  # On the first side until its base or the middle.
    out.append("")
    for line in lines[number + 1:end]:
      if _BASE.match(line) or _MIDDLE.match(line):
        keep = False
        out.append("")
      else:
        out.append(line if keep else "")
    out.append("")
    kept = True
    number = end + 1
  return "\n".join(out) if kept else None


def spans(text: str) -> List[Tuple[int, int]]:
  """The first and last line (from 1) of each complete conflict.

  >>> spans("<<<<<<< HEAD\\na\\n=======\\nb\\n>>>>>>> x\\n")
  [(1, 5)]
  """
  lines = text.split("\n")
  found: List[Tuple[int, int]] = []
  number = 0
  while number < len(lines):
    end = _conflict_end(lines, number) if _OPEN.match(lines[number]) else None
    if end is None:
      number += 1
      continue
    found.append((number + 1, end + 1))
    number = end + 1
  return found


def _conflict_end(lines: List[str], start: int) -> Optional[int]:
  """The line of the `>>>>>>>` closing the conflict opened at `start`,
  after its `=======` and before any other conflict opens."""
  middle = False
  for number in range(start + 1, len(lines)):
    line = lines[number]
    if _OPEN.match(line):
      return None
    if _MIDDLE.match(line):
      middle = True
    elif _CLOSE.match(line):
      return number if middle else None
  return None
