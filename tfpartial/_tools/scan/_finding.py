"""What the scanner reports: a finding, and an edit of the source text."""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

@dataclasses.dataclass(frozen=True)
class Edit:
  """Replace the text from (line, col) to (end_line, end_col) by `text`.

  Lines are 1-based and columns 0-based, as `ast` gives them; an insertion
  has the same start and end.
  """

  line: int
  col: int
  end_line: int
  end_col: int
  text: str


@dataclasses.dataclass(frozen=True)
class Finding:
  """One hand-made freeze found in one file.

  Attributes:
    path: The file, as the scan was asked for it.
    line: 1-based line (in its cell, for a notebook).
    col: 1-based column.
    idiom: The idiom's id (`idioms.all_idioms()`).
    message: What the code does, where.
    drift: What makes it drift, with what is in scope.
    port: The tfpartial port, in words.
    edits: The mechanical port, or empty when it is by hand.
    by_hand: Why the port is by hand, when `edits` is empty.
    cell: The notebook cell (1-based) or None.
    edited: The file `edits` are in, when not `path` (a helper's finding
      whose callers are ported).
  """

  path: str
  line: int
  col: int
  idiom: str
  message: str
  drift: str
  port: str
  edits: Tuple[Edit, ...] = ()
  by_hand: str = ""
  cell: Optional[int] = None
  edited: str = ""

  @property
  def where(self) -> Tuple[str, int, int]:
    """The sort key: path, line, column."""
    return (self.path, self.line, self.col)
