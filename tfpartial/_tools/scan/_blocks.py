"""A file Python refuses for one broken block (a stray indent, tabs mixed
so that a line unindents to no level, a half-edited function): read
without that block, so the good blocks' freezes are still found. The file
is split at its top-level statements; the block holding the error is read
as blank lines, so every other line keeps its number.

>>> text = "def f(:\\n  pass\\n\\nx = 1\\ny = 2\\nz = 3\\n"
>>> tree, dropped = kept(text)
>>> [node.lineno for node in tree.body], dropped
([4, 5, 6], [(1, 3, 1, 'invalid syntax')])
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Set, Tuple

_MOST_BLOCKS = 3  # More broken blocks than this: the file is not Python.
# A line at column 0 that carries on the statement before it.
_CONTINUED = re.compile(r"(?:else|elif|except|finally)\b|[)\]}]")

Dropped = Tuple[int, int, int, str]  # (first, last, error's line, why).


def kept(text: str, path: str = "<unknown>"
         ) -> Optional[Tuple[ast.Module, List[Dropped]]]:
  """The tree of `text` without the top-level blocks that do not parse,
  and those blocks (a block is read as blank lines; a wrong split, as at
  a line at column 0 inside brackets, costs one more block); None when
  more than `_MOST_BLOCKS` blocks, or half the lines or more, would be
  left out."""
  lines = text.split("\n")
  starts = _starts(lines)
  found = _without(list(lines), starts, path)
  if found is None:
    # A stray quote after a docstring at column 0 (four quotes where
    # three close it): the string's lines were read as statements, and a
    # block cut inside it leaves it open; cut the block holding it all.
    outside = _outside_strings(lines, starts)
    if outside != starts:
      found = _without(list(lines), outside, path)
  return found


def _without(lines: List[str], starts: List[int], path: str
             ) -> Optional[Tuple[ast.Module, List[Dropped]]]:
  """`kept` with the blocks split at `starts`."""
  dropped: List[Dropped] = []
  while True:
    try:
      return ast.parse("\n".join(lines), filename=path), dropped
    except SyntaxError as error:
      block = _block(starts, len(lines), (error.lineno or 1) - 1)
      if block is None or len(dropped) == _MOST_BLOCKS or any(
          drop[0] == block[0] + 1 for drop in dropped):
        return None
      dropped.append((block[0] + 1, block[1], error.lineno or 1, error.msg))
    except (ValueError, RecursionError, MemoryError):
      return None
    if 2 * sum(drop[1] - drop[0] + 1 for drop in dropped) >= len(
        lines):
      return None
    first, end = dropped[-1][:2]
    lines[first - 1:end] = [""] * (end - first + 1)


def _starts(lines: List[str]) -> List[int]:
  """The lines (from 0) where a top-level statement starts: code at
  column 0 that does not carry on the one before (`else:`, a closing
  bracket, the line after a decorator or a backslash)."""
  starts = []
  before = ""
  for number, line in enumerate(lines):
    if not line.strip() or line[0] in " \t#":
      continue
    if not (_CONTINUED.match(line) or before.startswith("@") or
            before.rstrip().endswith("\\")):
      starts.append(number)
    before = line
  return starts


_TRIPLE = re.compile("\"{3}|'{3}")


def _outside_strings(lines: List[str], starts: List[int]) -> List[int]:
  """The `starts` that do not begin inside a triple-quoted string (the
  quotes counted as written, line by line).

  >>> lines = ["x = 1", "\'\'\'", "NOTE", "\'\'\'\'", "y = 2"]
  >>> _outside_strings(lines, _starts(lines))
  [0, 1, 4]
  """
  inside: Set[int] = set()
  quote = ""
  for number, line in enumerate(lines):
    if quote:
      inside.add(number)
    for match in _TRIPLE.finditer(line):
      if not quote:
        quote = match.group()
      elif match.group() == quote:
        quote = ""
  return [start for start in starts if start not in inside]


def _block(starts: List[int], count: int, line: int
           ) -> Optional[Tuple[int, int]]:
  """(first, end) of the block holding `line` (from 0; end excluded)."""
  first = max((s for s in starts if s <= line), default=None)
  if first is None:
    return None
  end = min((s for s in starts if s > line), default=count)
  return first, end
