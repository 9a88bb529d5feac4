"""The compact hint: told once a process, where compact mode would pay.

A row spec training under `_HINT_FRACTION` of the rows of a table of
`_HINT_ELEMENTS` elements or more, without `compact=True`, may read and
write the whole table at every step for a few rows. An element mask
training under `_ELEMENT_FRACTION` of so large a variable updates and
keeps state for every element. From there down compact mode costs less
than both the plain step and the same spec without `compact` (with the
compiled kernel, whose one pass over the variable is what compact
competes with, for Keras Adam from about 4% up; docs/performance.md,
"Sparse fine-tuning", has the measurements, bench row (o)).
"""

from __future__ import annotations

import logging
from typing import Optional, Sequence

from tfpartial._frozen import _variables
from tfpartial._frozen._selection import RowSet, Selection
from tfpartial._frozen._types import Variable
from tfpartial._step._plan import Entry

# The package's own logger, as the docs name it: a user silences or routes
# it by that name, wherever the hint is made.
_log = logging.getLogger("tfpartial")

_HINT_FRACTION = 0.01
_HINT_ELEMENTS = 1 << 20
_ELEMENT_FRACTION = 0.02
_compact_hinted = False


def hint_compact(entries: Sequence[Entry]) -> None:
  """Says once a process (a WARNING of the `tfpartial` logger) that compact
  mode exists, when an entry's row selection trains under 1% of the rows
  of a table of 2**20 elements or more without it, or its static element
  mask under 2% of so large a variable."""
  for entry in entries:
    if _compact_hinted:
      return
    _hint(entry.variable, entry.selection)


def _hint(variable: Variable, selection: Optional[Selection]) -> None:
  global _compact_hinted
  if (selection is None or selection.compact or selection.is_empty
      or selection.size < _HINT_ELEMENTS or selection.mask_variables):
    return
  row_set = selection.row_set
  if row_set is None:
    message = _element_hint(variable, selection)
  else:
    message = _row_hint(variable, selection, row_set)
  if message is not None:
    _compact_hinted = True
    _log.warning("%s", message)


def _row_hint(variable: Variable, selection: Selection,
              row_set: RowSet) -> Optional[str]:
  rows = row_set.row_count
  trained = rows - selection.frozen_count // max(row_set.row_size, 1)
  if trained >= _HINT_FRACTION * rows:
    return None
  return (
      f"tfpartial: the spec trains {trained} of {rows} rows of "
      f"{_variables.describe(variable)}, and a step may read and write the "
      "whole table for them (wherever the optimizer updates every row, as "
      "Keras' optimizers do). `tfpartial.train_only(variable, rows, "
      "compact=True)` trains a variable of those rows only: a step then "
      "costs in proportion to them, less than both the plain step and this "
      "spec without `compact`, and so does the optimizer's state, but "
      "the optimizer's checkpoint differs from a plain run's (its slots "
      "belong to the small variable). Said once.")


def _element_hint(variable: Variable, selection: Selection) -> Optional[str]:
  trained = selection.size - selection.frozen_count
  if trained >= _ELEMENT_FRACTION * selection.size:
    return None
  return (
      f"tfpartial: the spec trains {trained} of {selection.size} elements "
      f"({100 * trained / selection.size:.2g}%) of "
      f"{_variables.describe(variable)}, and the optimizer updates and keeps "
      "state for all of them. `tfpartial.train_only(variable, mask, "
      "compact=True)` trains a vector of those elements only: the "
      "optimizer's state is then in proportion to them, and under 2% "
      "trainable a step costs less than both the plain step and this spec "
      "without `compact` (from about 4% trainable it can cost more than "
      "the spec without it); but the optimizer's checkpoint differs from "
      "a plain run's (its slots belong to the small variable). Said once.")
