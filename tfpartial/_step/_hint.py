"""The compact hint: told once a process, where compact mode would pay.

A row spec training under `_HINT_FRACTION` of the rows of a table of
`_HINT_ELEMENTS` elements or more, without `compact=True`, may read and
write the whole table at every step for a few rows.
"""

from __future__ import annotations

import logging
from typing import Optional, Sequence

from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Variable
from tfpartial._step._plan import Entry

# The package's own logger, as the docs name it: a user silences or routes
# it by that name, wherever the hint is made.
_log = logging.getLogger("tfpartial")

_HINT_FRACTION = 0.01
_HINT_ELEMENTS = 1 << 20
_compact_hinted = False


def hint_compact(entries: Sequence[Entry]) -> None:
  """Says once a process (a WARNING of the `tfpartial` logger) that compact
  mode exists, when an entry's row selection trains under 1% of the rows
  of a table of 2**20 elements or more without it."""
  for entry in entries:
    if _compact_hinted:
      return
    _hint(entry.variable, entry.selection)


def _hint(variable: Variable, selection: Optional[Selection]) -> None:
  global _compact_hinted
  row_set = None if selection is None else selection.row_set
  if (selection is None or row_set is None or selection.compact
      or selection.is_empty or selection.size < _HINT_ELEMENTS):
    return
  rows = row_set.row_count
  trained = rows - selection.frozen_count // max(row_set.row_size, 1)
  if trained >= _HINT_FRACTION * rows:
    return
  _compact_hinted = True
  _log.warning(
      "tfpartial: the spec trains %d of %d rows of %s, and a step may read "
      "and write the whole table for them (wherever the optimizer updates "
      "every row, as Keras' optimizers do). "
      "`tfpartial.train_only(variable, rows, compact=True)` "
      "trains a variable of those rows only: a step then costs in "
      "proportion to them, and so does the optimizer's state, but the "
      "optimizer's checkpoint differs from a plain run's (its slots belong "
      "to the small variable). Said once.", trained, rows,
      _variables.describe(variable))
