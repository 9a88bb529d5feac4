"""Which elements of one variable are frozen: all, a mask, or a mask variable.

A selection is an immutable NumPy-side value; it knows nothing of TensorFlow
graphs. `_tensors.py` turns it into tensors where a step needs them.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple, Union

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
    if other.is_everything or isinstance(other, Dynamic):
      return other.union(self)
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


@dataclasses.dataclass(frozen=True, eq=False)
class Dynamic:
  """Frozen where boolean mask variables say so, read at every step.

  `masks` holds (variable, trains) pairs: a `freeze` mask freezes where
  True, a `train_only` mask where False. `static` is ORed in. Changing a
  mask variable between steps changes the freeze without retracing a
  `tf.function` or rebuilding a TF1 graph.
  """

  shape: Tuple[int, ...]
  masks: Tuple[Tuple[object, bool], ...]
  static: Optional[np.ndarray] = None

  is_everything = False
  is_empty = False

  @property
  def size(self) -> int:
    return int(np.prod(self.shape, dtype=np.int64))

  @property
  def frozen_count(self) -> int:
    return int(np.count_nonzero(self.frozen_mask()))

  def frozen_mask(self) -> np.ndarray:
    """The freeze as it stands now (eager only: the masks are variables)."""
    frozen = (np.zeros(self.shape, bool) if self.static is None
              else self.static.copy())
    for variable, trains in self.masks:
      try:
        value = np.asarray(variable.numpy(), dtype=bool)
      except (AttributeError, NotImplementedError, ValueError):
        raise TypeError(
            f"the mask variable '{variable.name}' has no value outside a "
            "session in a TF1 graph; read it with session.run") from None
      frozen |= ~value if trains else value
    return frozen

  def union(self, other: "Selection") -> "Selection":
    if other.is_everything:
      return other
    if isinstance(other, Dynamic):
      static = _or(self.static, other.static)
      masks = self.masks + tuple(m for m in other.masks if m not in self.masks)
      return Dynamic(self.shape, masks, static)
    return Dynamic(self.shape, self.masks, _or(self.static, other.mask))

  def describe(self) -> str:
    parts = [f"{'train where' if trains else 'frozen where'} "
             f"'{getattr(variable, 'name', '?')}'"
             for variable, trains in self.masks]
    if self.static is not None:
      parts.append(f"{int(self.static.sum())} more frozen")
    return "mask variable: " + "; ".join(parts)

  def fingerprint(self) -> tuple:
    static = None if self.static is None else np.packbits(self.static).tobytes()
    return ("dynamic", tuple((id(v), t) for v, t in self.masks), static)


def _or(a: Optional[np.ndarray], b: Optional[np.ndarray]):
  if a is None or b is None:
    return b if a is None else a
  result = a | b
  result.setflags(write=False)
  return result


Selection = Union[Everything, Elements, Dynamic]


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
