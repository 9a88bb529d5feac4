"""`tfpartial verify`: proof from two checkpoints that no frozen element moved.

Works on any codebase's checkpoints, tfpartial or not: the spec file says
what must hold, the checkpoints say what happened. Values are compared by
their bits, so a NaN that stayed NaN is unchanged and -0.0 -> 0.0 is not.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import List, Optional, TextIO

import numpy as np

from tfpartial import _checkpoints
from tfpartial import _index
from tfpartial import _specfile


@dataclasses.dataclass
class Row:
  """What happened to one variable between the two checkpoints."""

  name: str
  shape: tuple
  frozen: int
  changed_frozen: int
  largest_change: Optional[float]
  trainable: int
  changed_trainable: int


def verify(before: str, after: str, spec_path: str,
           out: TextIO = sys.stdout, progress: TextIO = sys.stderr) -> int:
  """Prints the table; returns 0 (every frozen element held) or 1.

  Raises:
    ValueError, TypeError, IndexError: bad input (the caller exits 2).
  """
  data, directory = _specfile.read(spec_path)
  entries = list(_specfile.entries(data, directory))
  first, second = (_checkpoints.Checkpoint(before),
                   _checkpoints.Checkpoint(after))
  rows: List[Row] = []
  for position, (name, kind, index, shape, _) in enumerate(entries, start=1):
    key_before, key_after = first.resolve(name), second.resolve(name)
    stored = first.shape(key_before)
    if second.shape(key_after) != stored:
      raise ValueError(
          f"'{name}' has shape {stored} in BEFORE but "
          f"{second.shape(key_after)} in AFTER")
    if shape is not None and tuple(shape) != stored:
      raise ValueError(
          f"the spec gives '{name}' the shape {tuple(shape)}; the checkpoint "
          f"holds {stored}")
    print(f"\rreading {position}/{len(entries)}: {name} {stored}",
          end="", file=progress, flush=True)
    selected = _index.selection_mask(
        stored, index, f"variable '{name}' of shape {stored}")
    frozen = selected if kind == "freeze" else ~selected
    rows.append(_compare(name, stored, frozen, first.read(key_before),
                         second.read(key_after)))
  if entries:
    print(file=progress)
  _print_table(rows, out)
  broken = [row for row in rows if row.changed_frozen]
  for row in broken:
    print(f"FAILED: {row.changed_frozen} frozen element(s) of '{row.name}' "
          f"changed, the largest by {row.largest_change:.6g}", file=out)
  if not broken:
    print(f"OK: every frozen element of {len(rows)} variable(s) is "
          "bit-for-bit unchanged", file=out)
  return 1 if broken else 0


def _compare(name, shape, frozen, before, after) -> Row:
  before, after = np.asarray(before), np.asarray(after)
  if before.dtype.kind in "fc" and before.dtype.itemsize in (2, 4, 8):
    unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[
        before.dtype.itemsize]
    differs = before.view(unsigned) != after.view(unsigned)
  else:
    differs = before != after
  changed = differs & frozen
  largest = None
  if changed.any():
    with np.errstate(invalid="ignore", over="ignore"):
      deltas = np.abs(after[changed].astype(np.float64)
                      - before[changed].astype(np.float64))
    largest = float(np.nan if np.isnan(deltas).any() else deltas.max())
  return Row(name, shape, int(frozen.sum()), int(changed.sum()), largest,
             int((~frozen).sum()), int((differs & ~frozen).sum()))


def _print_table(rows: List[Row], out: TextIO) -> None:
  header = ("variable", "shape", "frozen", "frozen changed", "largest change",
            "trainable changed")
  lines = [header] + [
      (row.name, str(row.shape), str(row.frozen), str(row.changed_frozen),
       "-" if row.largest_change is None else f"{row.largest_change:.6g}",
       f"{row.changed_trainable}/{row.trainable}") for row in rows]
  widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
  for line in lines:
    print("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                    for i, (cell, w) in enumerate(zip(line, widths))),
          file=out)
