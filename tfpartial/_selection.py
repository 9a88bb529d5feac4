"""Which elements of one variable are frozen: the whole of it, or a mask.

A selection is an immutable NumPy-side value; it knows nothing of TensorFlow
graphs. `_tensors.py` turns it into tensors where a step needs them.
"""

from __future__ import annotations

import dataclasses
from typing import Tuple, Union

import numpy as np


@dataclasses.dataclass(frozen=True, eq=False)
class Everything:
  """Every element of the variable is frozen."""

  shape: Tuple[int, ...]

  is_everything = True
  is_empty = False

  @property
  def size(self) -> int:
    return int(np.prod(self.shape, dtype=np.int64))

  @property
  def frozen_count(self) -> int:
    return self.size

  def frozen_mask(self) -> np.ndarray:
    return np.ones(self.shape, dtype=bool)

  def union(self, other: "Selection") -> "Selection":
    del other  # Everything already holds it.
    return self

  def describe(self) -> str:
    return "all frozen"

  def fingerprint(self) -> tuple:
    return ("everything", self.shape)


@dataclasses.dataclass(frozen=True, eq=False)
class Elements:
  """The elements where `mask` is True are frozen; `mask` is read-only."""

  mask: np.ndarray

  is_everything = False

  @property
  def shape(self) -> Tuple[int, ...]:
    return self.mask.shape

  @property
  def size(self) -> int:
    return int(self.mask.size)

  @property
  def frozen_count(self) -> int:
    return int(np.count_nonzero(self.mask))

  @property
  def is_empty(self) -> bool:
    return not self.mask.any()

  def frozen_mask(self) -> np.ndarray:
    return self.mask.copy()

  def union(self, other: "Selection") -> "Selection":
    if other.is_everything:
      return other
    return from_mask(self.mask | other.frozen_mask())

  def describe(self) -> str:
    rows = _row_range(self.mask)
    if rows is not None:
      first, last = rows
      return (f"row {first} frozen" if first == last
              else f"rows {first}..{last} frozen")
    return f"{self.frozen_count}/{self.size} frozen"

  def fingerprint(self) -> tuple:
    return ("elements", self.mask.shape, np.packbits(self.mask).tobytes())


Selection = Union[Everything, Elements]


def from_mask(mask: np.ndarray) -> Selection:
  """The selection freezing where `mask` is True; takes ownership of `mask`."""
  if mask.all():
    return Everything(mask.shape)
  mask.setflags(write=False)
  return Elements(mask)


def _row_range(mask: np.ndarray):
  """(first, last) when `mask` freezes exactly whole rows first..last."""
  if mask.ndim < 2 or not mask.any():
    return None
  flat = mask.reshape(mask.shape[0], -1)
  whole = flat.all(axis=1)
  if not np.array_equal(whole, flat.any(axis=1)):
    return None
  rows = np.flatnonzero(whole)
  if rows[-1] - rows[0] + 1 != rows.size:
    return None
  return int(rows[0]), int(rows[-1])
