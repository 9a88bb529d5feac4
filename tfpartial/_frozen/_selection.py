"""Which elements of one variable are frozen: all, a mask, rows, a mask variable.

A selection is an immutable NumPy-side value; it knows nothing of TensorFlow
graphs. `_tensors.py` turns it into tensors where a step needs them.

Element masks live in buffers aligned as TensorFlow aligns its own
(`new_mask`), so an eager mask tensor can share their memory instead of
copying it: a spec then holds one byte per element, not two.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import (Callable, Hashable, Optional, Protocol, Tuple, cast,
                    overload)

import numpy as np


class MaskVariable(Protocol):
  """A bool mask variable, as `Dynamic` reads it (`_types.Variable` is one).

  Declared here, not taken from `_types`: `_types` imports this module.
  """

  @property
  def name(self) -> str: ...

  def numpy(self) -> np.ndarray: ...


class RowSet(Protocol):
  """Whole rows along the first axis, held as row numbers (`Rows` is one).

  What compact training, the compact hint and row index text read of a
  row selection: never a mask of the table.
  """

  @property
  def shape(self) -> Tuple[int, ...]: ...

  # Sorted, unique, int64, read-only: the frozen rows, or with `trains`
  # the only rows that train.
  @property
  def rows(self) -> np.ndarray: ...

  @property
  def trains(self) -> bool: ...

  @property
  def row_count(self) -> int: ...

  @property
  def row_size(self) -> int: ...


MaskVariables = Tuple[Tuple[MaskVariable, bool], ...]


class Selection(Protocol):
  """What every selection offers; the step, the kernels and the spec file
  use only this, and never ask which kind a selection is."""

  @property
  def shape(self) -> Tuple[int, ...]: ...

  @property
  def size(self) -> int: ...

  @property
  def frozen_count(self) -> int: ...

  # Every element frozen / none frozen.
  @property
  def is_everything(self) -> bool: ...

  @property
  def is_empty(self) -> bool: ...

  # Trained through a small variable of what trains (`_step/_compact.py`):
  # its rows for whole rows, its elements for an element mask.
  @property
  def compact(self) -> bool: ...

  def frozen_mask(self) -> np.ndarray: ...

  # The static freeze as a step reads it, broadcasting to the variable: of
  # its shape for an element mask, one bool per row shaped [rows, 1, ...]
  # for whole rows; None where nothing is static (mask variables alone).
  def broadcast_mask(self) -> Optional[np.ndarray]: ...

  # Whether the freeze is a static mask of the variable's full shape, which
  # a kernel may take packed, one bit per element.
  @property
  def packable(self) -> bool: ...

  # The mask variables a step reads the freeze from at every step, with
  # whether each says what trains; empty for a static selection.
  @property
  def mask_variables(self) -> MaskVariables: ...

  # The rows as row numbers, where the freeze is whole rows held so.
  @property
  def row_set(self) -> Optional[RowSet]: ...

  def union(self, other: "Selection") -> "Selection": ...

  def describe(self) -> str: ...

  def fingerprint(self) -> Tuple[Hashable, ...]: ...


@dataclasses.dataclass(frozen=True, eq=False)
class Everything:
  """Every element of the variable is frozen.

  `compact`: the part of a table that trains compact (`part_of`): a step
  leaves it out, with no state, as the compact layout has none for it.
  """

  shape: Tuple[int, ...]
  compact: bool = False

  is_everything = True
  is_empty = False
  packable = False
  mask_variables: MaskVariables = ()
  row_set = None

  @property
  def size(self) -> int:
    return int(np.prod(self.shape, dtype=np.int64))

  @property
  def frozen_count(self) -> int:
    return self.size

  def frozen_mask(self) -> np.ndarray:
    return np.ones(self.shape, dtype=bool)

  def broadcast_mask(self) -> np.ndarray:
    return np.ones(self.shape[:1] + (1,) * (len(self.shape) - 1), dtype=bool)

  def union(self, other: "Selection") -> "Selection":
    del other  # Everything already holds it.
    return self

  def describe(self) -> str:
    return "all frozen"

  def fingerprint(self) -> Tuple[Hashable, ...]:
    return ("everything", self.shape)


@dataclasses.dataclass(frozen=True, eq=False)
class Elements:
  """The elements where `mask` is True are frozen; `mask` is read-only.

  With `compact`, the elements that train are trained through a small
  variable of their own (`_step/_compact.py`).
  """

  mask: np.ndarray
  compact: bool = False

  is_everything = False
  packable = True
  mask_variables: MaskVariables = ()
  row_set = None

  @property
  def shape(self) -> Tuple[int, ...]:
    return self.mask.shape

  @property
  def size(self) -> int:
    return int(self.mask.size)

  # Counted once: a step asks at every call, and the mask is immutable.
  @functools.cached_property
  def frozen_count(self) -> int:
    return int(np.count_nonzero(self.mask))

  @functools.cached_property
  def is_empty(self) -> bool:
    return not self.mask.any()

  def frozen_mask(self) -> np.ndarray:
    # Annotated: checked as Python 3.10 (mypy.ini), NumPy's stubs make
    # `copy()` Any.
    mask: np.ndarray = self.mask.copy()
    return mask

  def broadcast_mask(self) -> np.ndarray:
    return self.mask

  def union(self, other: "Selection") -> "Selection":
    if other.is_everything or isinstance(other, Dynamic):
      return other.union(self)
    mask = other.mask if isinstance(other, Elements) else other.frozen_mask()
    return from_mask(_or(self.mask, mask),
                     compact=self.compact or other.compact)

  def describe(self) -> str:
    compact = ", compact" if self.compact else ""
    if self.is_empty:
      return "nothing frozen" + compact
    if self.mask.ndim >= 2:
      flat = self.mask.reshape(self.mask.shape[0], -1)
      whole = flat.all(axis=1)
      if np.array_equal(whole, flat.any(axis=1)):  # Whole rows, as Rows.
        return _describe_rows(self.mask.shape[0],
                              np.flatnonzero(whole)) + compact
    return f"{self.frozen_count}/{self.size} frozen{compact}"

  def fingerprint(self) -> Tuple[Hashable, ...]:
    if self.mask.ndim:
      flat = self.mask.reshape(self.mask.shape[0], -1)
      whole = flat.all(axis=1)
      if np.array_equal(whole, flat.any(axis=1)):  # Compares equal to Rows.
        return ("rows", self.shape, np.flatnonzero(whole).tobytes())
    return ("elements", self.mask.shape, np.packbits(self.mask).tobytes())


@dataclasses.dataclass(frozen=True, eq=False)
class Rows:
  """Whole rows along the first axis, held as a sorted set of row numbers.

  `rows` are the frozen rows or, with `trains`, the only rows that train.
  Nothing the size of the table is made until a dense mask is asked for:
  an embedding spec costs memory in proportion to the rows it names.
  """

  shape: Tuple[int, ...]
  rows: np.ndarray  # Sorted, unique, int64, read-only.
  trains: bool = False
  compact: bool = False

  is_everything = False
  packable = False
  mask_variables: MaskVariables = ()

  @property
  def row_set(self) -> RowSet:
    return self

  @property
  def row_count(self) -> int:
    return int(self.shape[0])

  @property
  def row_size(self) -> int:
    return int(np.prod(self.shape[1:], dtype=np.int64))

  @property
  def size(self) -> int:
    return self.row_count * self.row_size

  @property
  def frozen_count(self) -> int:
    frozen = self.rows.size if not self.trains else (
        self.row_count - self.rows.size)
    return frozen * self.row_size

  @property
  def is_empty(self) -> bool:
    return self.frozen_count == 0

  def frozen_rows(self) -> np.ndarray:
    if not self.trains:
      return self.rows
    return np.setdiff1d(np.arange(self.row_count, dtype=np.int64), self.rows,
                        assume_unique=True)

  def frozen_row_vector(self) -> np.ndarray:
    """One bool per row, True where the row is frozen."""
    vector = np.zeros(self.row_count, dtype=bool)
    vector[self.rows] = True
    return ~vector if self.trains else vector

  def frozen_mask(self) -> np.ndarray:
    mask = np.zeros(self.shape, dtype=bool)
    mask[self.frozen_rows()] = True
    return mask

  def broadcast_mask(self) -> np.ndarray:
    return self.frozen_row_vector().reshape(
        (-1,) + (1,) * (len(self.shape) - 1))

  def union(self, other: "Selection") -> "Selection":
    if other.is_everything or isinstance(other, Dynamic):
      return other.union(self)
    if isinstance(other, Rows):
      compact = self.compact or other.compact
      if self.trains and other.trains:
        return from_rows(self.shape, np.intersect1d(self.rows, other.rows),
                         trains=True, compact=compact)
      if self.trains or other.trains:
        trains, frozen = (self, other) if self.trains else (other, self)
        return from_rows(self.shape, np.setdiff1d(trains.rows, frozen.rows),
                         trains=True, compact=compact)
      return from_rows(self.shape, np.union1d(self.rows, other.rows))
    if isinstance(other, Elements):
      return other.union(self)
    return from_mask(_or(self.frozen_mask(), other.frozen_mask()))

  def describe(self) -> str:
    compact = ", compact" if self.compact else ""
    if self.is_empty:
      return "nothing frozen" + compact
    if len(self.shape) == 1:  # A vector's rows are its elements.
      return f"{self.frozen_count}/{self.size} frozen{compact}"
    return _describe_rows(self.row_count, self.rows, self.trains) + compact

  def fingerprint(self) -> Tuple[Hashable, ...]:
    return ("rows", self.shape, self.frozen_rows().tobytes())


@dataclasses.dataclass(frozen=True, eq=False)
class Dynamic:
  """Frozen where boolean mask variables say so, read at every step.

  `masks` holds (variable, trains) pairs: a `freeze` mask freezes where
  True, a `train_only` mask where False. `static` is ORed in. Changing a
  mask variable between steps changes the freeze without retracing a
  `tf.function` or rebuilding a TF1 graph.
  """

  shape: Tuple[int, ...]
  masks: Tuple[Tuple[MaskVariable, bool], ...]
  static: Optional[np.ndarray] = None

  is_everything = False
  is_empty = False
  compact = False
  packable = False
  row_set = None

  @property
  def mask_variables(self) -> MaskVariables:
    return self.masks

  @property
  def size(self) -> int:
    return int(np.prod(self.shape, dtype=np.int64))

  @property
  def frozen_count(self) -> int:
    return int(np.count_nonzero(self.frozen_mask()))

  def broadcast_mask(self) -> Optional[np.ndarray]:
    return self.static

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
    return Dynamic(self.shape, self.masks,
                   _or(self.static, other.frozen_mask()))

  def describe(self) -> str:
    parts = [f"{'trains where' if trains else 'frozen where'} "
             f"'{_name(variable)}' is True"
             for variable, trains in self.masks]
    if self.static is not None:
      parts.append(f"{int(self.static.sum())} more frozen")
    return "mask variable: " + "; ".join(parts)

  def fingerprint(self) -> Tuple[Hashable, ...]:
    static = None if self.static is None else np.packbits(self.static).tobytes()
    return ("dynamic", tuple((id(v), t) for v, t in self.masks), static)


def trainable_offsets(selection: "Selection") -> np.ndarray:
  """The flat offsets of the trainable elements of a static selection
  (`Elements` or `Rows`), rising, as int32 (the variable has fewer than
  2**31 elements)."""
  mask = selection.broadcast_mask()
  if mask is None or selection.mask_variables:
    raise TypeError(f"trainable offsets of a mask read at every step: "
                    f"{selection.describe()}")
  row_set = selection.row_set
  if row_set is None:
    return np.flatnonzero(~mask.reshape(-1)).astype(np.int32)
  rows = np.flatnonzero(~mask.reshape(-1))
  offsets = (rows[:, None] * row_set.row_size
             + np.arange(row_set.row_size, dtype=np.int64)).reshape(-1)
  return offsets.astype(np.int32)


def part_of(selection: "Selection", offset: Tuple[int, ...],
            shape: Tuple[int, ...]) -> "Selection":
  """The selection of one part of a table (`_tables`): the block of
  `shape` at `offset` of the table `selection` is of.

  Rows stay row numbers (those of the part's block, from 0), so a part's
  selection costs what the table's does.
  """
  if selection.is_everything:
    return Everything(tuple(shape))
  if isinstance(selection, Rows):
    start, stop = offset[0], offset[0] + shape[0]
    rows = selection.rows
    inside = rows[np.searchsorted(rows, start):np.searchsorted(rows, stop)]
    part = from_rows(tuple(shape), inside - start, selection.trains,
                     selection.compact)
  elif isinstance(selection, Elements):
    block = tuple(slice(o, o + n) for o, n in zip(offset, shape))
    part = from_mask(np.array(selection.mask[block]), selection.compact)
  else:
    raise TypeError(f"a part of a mask read at every step: "
                    f"{selection.describe()}")
  if part.is_everything and selection.compact:
    return Everything(tuple(shape), compact=True)
  return part


def renumbered(selection: "Selection",
               to_rows: Callable[[np.ndarray], np.ndarray]) -> "Selection":
  """`selection` with row i moved to row `to_rows(i)` (a permutation of the
  first axis given as a function of int64 row numbers): from a lookup's
  ids to the checkpoint's rows (`_tables.checkpoint_rows`)."""
  if selection.is_everything or selection.is_empty:
    return selection
  if isinstance(selection, Rows):
    rows = np.sort(to_rows(selection.rows))
    return from_rows(selection.shape, rows, selection.trains,
                     selection.compact)
  if isinstance(selection, Elements):
    moved = new_mask(selection.shape)
    moved[to_rows(np.arange(selection.shape[0], dtype=np.int64))] = (
        selection.mask)
    return from_mask(moved, selection.compact)
  raise TypeError(f"rows renumbered in a mask read at every step: "
                  f"{selection.describe()}")


@overload
def _or(a: np.ndarray, b: Optional[np.ndarray]) -> np.ndarray: ...


@overload
def _or(a: Optional[np.ndarray], b: np.ndarray) -> np.ndarray: ...


@overload
def _or(a: Optional[np.ndarray],
        b: Optional[np.ndarray]) -> Optional[np.ndarray]: ...


def _or(a: Optional[np.ndarray],
        b: Optional[np.ndarray]) -> Optional[np.ndarray]:
  """`a | b` in a new read-only mask from `new_mask` (None is all False)."""
  if a is None or b is None:
    return b if a is None else a
  # Annotated: NumPy's stubs make a ufunc's result Any.
  result: np.ndarray = np.logical_or(a, b, out=new_mask(a.shape))
  result.setflags(write=False)
  return result


# Eigen's largest alignment, which TensorFlow's CPU kernels may assume of a
# tensor's data: a tensor can share a buffer aligned so.
ALIGNMENT = 64


def new_mask(shape: Tuple[int, ...]) -> np.ndarray:
  """A writable all-False bool array whose data is `ALIGNMENT`-aligned.

  A view into a larger, writable uint8 buffer: its data can then be shared
  with a tensor (`_tensors`), even once the view is made read-only.
  """
  size = int(np.prod(shape, dtype=np.int64))
  buffer = np.zeros(size + ALIGNMENT, dtype=np.uint8)
  start = -buffer.ctypes.data % ALIGNMENT
  return buffer[start:start + size].view(bool).reshape(shape)


def is_aligned(mask: np.ndarray) -> bool:
  """Whether `mask` is a C-ordered bool array `new_mask` could have made."""
  return (isinstance(mask, np.ndarray) and mask.dtype == np.bool_
          and mask.flags.c_contiguous and mask.ctypes.data % ALIGNMENT == 0)


def from_rows(shape: Tuple[int, ...], rows: np.ndarray, trains: bool = False,
              compact: bool = False) -> Selection:
  """The selection freezing `rows` (or, with `trains`, all other rows)."""
  rows = np.asarray(rows, dtype=np.int64)
  if rows.size == (0 if trains else shape[0]):
    return Everything(tuple(shape))
  rows.setflags(write=False)
  return Rows(tuple(shape), rows, trains, compact and trains)


def from_mask(mask: np.ndarray, compact: bool = False) -> Selection:
  """The selection freezing where `mask` is True; takes ownership of `mask`.

  A mask not made by `new_mask` is copied into one that is (then dropped).
  With `compact`, what trains is trained through a small variable.
  """
  if mask.all():
    return Everything(np.shape(mask))
  if not is_aligned(mask):  # (`~` of a 0-d array is a NumPy scalar.)
    aligned = new_mask(np.shape(mask))
    aligned[...] = mask
    mask = aligned
  mask.setflags(write=False)
  return Elements(mask, compact)


def _describe_rows(row_count: int, rows: np.ndarray,
                   trains: bool = False) -> str:
  """`rows 0..9 frozen`, `rows 0, 2 frozen`, `all but row 7 frozen`, ...

  `rows` (sorted, unique, neither none nor all) are the frozen rows or,
  with `trains`, the rows that train. The text depends only on which rows
  are frozen, and costs memory in proportion to `rows`, not to the table.
  """
  block = _frozen_block(row_count, rows, trains)
  if block is not None:
    first, last = block
    return (f"row {first} frozen" if first == last
            else f"rows {first}..{last} frozen")
  frozen = row_count - rows.size if trains else rows.size
  if frozen <= 4:
    listed = _other_rows(row_count, rows) if trains else rows
    return f"{_rows_word(listed)} frozen"
  if row_count - frozen <= 4:
    listed = rows if trains else _other_rows(row_count, rows)
    return f"all but {_rows_word(listed)} frozen"
  return f"{frozen}/{row_count} rows frozen"


def _other_rows(row_count: int, rows: np.ndarray) -> np.ndarray:
  """The rows not in `rows`; called where `rows` holds all but a few."""
  return np.setdiff1d(np.arange(row_count, dtype=np.int64), rows,
                      assume_unique=True)


def _rows_word(rows: np.ndarray) -> str:
  """`row 7` or `rows 0, 2, 4`."""
  listed = ", ".join(str(int(row)) for row in rows)
  return f"row {listed}" if rows.size == 1 else f"rows {listed}"


def _frozen_block(row_count: int, rows: np.ndarray,
                  trains: bool) -> Optional[Tuple[int, int]]:
  """(first, last) when the frozen rows are the one block first..last."""
  if not trains:
    if rows[-1] - rows[0] + 1 == rows.size:
      return int(rows[0]), int(rows[-1])
    return None
  # The training rows must be a run from row 0 and a run to the last row.
  # Sorted and unique, rows[i] == i holds exactly on the run from row 0.
  leading = int(np.count_nonzero(rows == np.arange(rows.size)))
  trailing = rows[leading:]
  if trailing.size and not (trailing[-1] == row_count - 1 and
                            trailing[-1] - trailing[0] + 1 == trailing.size):
    return None
  return leading, row_count - trailing.size - 1


def _name(variable: object) -> str:
  # A Keras 3 variable's `path`, or a tf.Variable's `name`: str either way.
  name = cast(str, getattr(variable, "path", None)
              or getattr(variable, "name", "?"))
  return name[:-2] if name.endswith(":0") else name
