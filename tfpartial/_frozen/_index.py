"""NumPy index semantics: which elements an index expression selects.

The contract is that `freeze(v, index)` freezes exactly the elements
`v.numpy()[index]` reads. NumPy itself decides that: we write through the
index into a boolean array of the variable's shape. This module only checks
the index first, so that every mistake is a clear TypeError, ValueError or
IndexError naming the variable instead of whatever NumPy says. The one
shortcut, `row_set` (whole rows without an array of the variable's size),
takes only indices whose structure NumPy accepts.
"""

from __future__ import annotations

import operator
import warnings
from typing import Optional, Sequence, SupportsIndex, Union, cast

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _npy
from tfpartial._frozen import _selection
from tfpartial._frozen._types import CheckedComponent, CheckedIndex, Index

_INTEGER_KINDS = "iu"


def selection_mask(shape: Sequence[int], index: Union[Index, _npy.MaskFile],
                   described: str, argument: str = "index") -> np.ndarray:
  """A bool array of `shape`, True exactly where `array[index]` reads.

  Args:
    shape: the full static shape of the variable.
    index: anything NumPy accepts inside brackets, limited to integers,
      slices, `Ellipsis`, `None`, integer arrays and boolean masks; or a
      spec file's mask file, read now that the shape is known.
    described: how errors name the variable (`variable 'x' of shape (2,)`).
    argument: the name of the argument `index` came in as.

  Returns:
    A new, writable boolean array of `shape`.

  Raises:
    TypeError: `index` holds a float, a string or another unsupported type.
    ValueError: a boolean mask does not match the shape it indexes.
    IndexError: an integer index is out of range, or too many indices.
  """
  if isinstance(index, _npy.MaskFile):
    index = index.load(shape, described)
  checked = check_index(index, described, argument)
  check_one_reading(shape, checked, described, argument)
  _check_structure(shape, checked, index, described, argument)
  # Aligned, so the spec can keep this array and share it with a tensor.
  mask = _selection.new_mask(tuple(shape))
  try:
    with warnings.catch_warnings():
      # NumPy 1.x only warns of an out-of-bound index when nothing is
      # selected; NumPy 2 raises. Raise on both.
      warnings.simplefilter("error", DeprecationWarning)
      mask[checked] = True
  except (IndexError, DeprecationWarning) as error:
    components = checked if isinstance(checked, tuple) else (checked,)
    if any(isinstance(c, np.ndarray) and c.dtype == bool and c.ndim
           for c in components):
      raise ValueError(
          f"`{argument}` is a boolean mask that does not fit {described}: "
          f"{str(error).rstrip('.')}.") from None
    raise IndexError(
        f"`{argument}` {_show(index)} is out of range for {described}: "
        f"{str(error).rstrip('.')}.") from None
  except (TypeError, ValueError) as error:
    raise TypeError(
        f"`{argument}` {_show(index)} is not a valid index for {described}: "
        f"{str(error).rstrip('.')}.") from None
  return mask


def row_set(shape: Sequence[int],
            checked: CheckedIndex) -> Optional[np.ndarray]:
  """The sorted rows `checked` selects when it selects whole rows, else None.

  Whole rows: one component over the first axis (an int, a slice, a 1-D
  integer array or a boolean vector of the rows), then only full slices and
  at most one `Ellipsis`, no more components than axes. Found without an
  array of the variable's size; anything NumPy would refuse returns None,
  for `selection_mask` to raise its error.
  """
  if not shape:
    return None
  parts = list(checked) if isinstance(checked, tuple) else [checked]
  if (sum(part is Ellipsis for part in parts) > 1
      or _axes_indexed(parts) > len(shape)):
    return None
  while parts and (parts[-1] is Ellipsis or (
      isinstance(parts[-1], slice) and parts[-1] == slice(None))):
    parts.pop()
  if not parts:  # `...`, `:` or `()`: every row.
    return np.arange(shape[0], dtype=np.int64)
  if len(parts) != 1:
    return None
  part, rows = parts[0], shape[0]
  if isinstance(part, (bool, np.bool_)) or part is None or part is Ellipsis:
    return None
  if isinstance(part, int):
    return np.array([part % rows]) if -rows <= part < rows else None
  if isinstance(part, slice):
    return np.unique(np.arange(*part.indices(rows), dtype=np.int64))
  if isinstance(part, np.ndarray) and part.ndim == 1:
    if part.dtype == bool:
      return np.flatnonzero(part) if part.size == rows else None
    if part.size and (part.min() < -rows or part.max() >= rows):
      return None
    return np.unique(part.astype(np.int64) % rows)
  return None


def check_one_reading(shape: Sequence[int], checked: CheckedIndex,
                      described: str, argument: str = "index") -> None:
  """ValueError for an index a 0/1 mask and NumPy read differently.

  TF1 code keeps masks as 0/1 numbers, and NumPy reads an integer array
  as row numbers: a (4, 3) mask of column 0, made `int`, selects rows 0
  and 1. So a bare integer array of the variable's full shape holding only
  0s and 1s is refused, showing both readings, unless they select the
  same elements; the user says which with `index.astype(bool)` (the mask)
  or `np.s_[index, ...]` (row numbers, as NumPy reads any tuple). Every
  other index keeps NumPy's meaning.
  """
  shape = tuple(shape)
  if not (isinstance(checked, np.ndarray)
          and checked.dtype.kind in _INTEGER_KINDS
          and checked.shape == shape and checked.size
          and checked.min() >= 0 and checked.max() <= 1):
    return
  as_mask = checked.astype(bool)
  rows = np.unique(checked)
  as_rows = np.isin(np.arange(shape[0]), rows).reshape(
      (-1,) + (1,) * (len(shape) - 1))
  if np.array_equal(as_mask, np.broadcast_to(as_rows, shape)):
    return
  size = as_mask.size
  positions = [str(tuple(int(i) for i in at))
               for at in np.argwhere(as_mask)[:5]]
  listed = ", ".join(positions[:4]) + (", ..." if len(positions) > 4 else "")
  at = f", at {listed}" if listed else ""
  word = "element" if len(shape) == 1 else "row"
  numbers = ", ".join(str(int(row)) for row in rows)
  reach = (f"{int(np.count_nonzero(as_rows)) * (size // shape[0])} of {size} "
           "elements" if rows.max() < shape[0] else
           f"out of range for {shape[0]} {word}")
  raise ValueError(
      f"`{argument}` for {described} is an integer array of the variable's "
      "shape holding only 0s and 1s, which reads two ways: as a 0/1 mask it "
      f"selects {int(np.count_nonzero(as_mask))} of {size} elements{at}; as "
      f"NumPy reads an integer array, row numbers, it selects "
      f"{word}{'s' if rows.size > 1 else ''} {numbers} ({reach}). Say which: "
      f"`{argument}.astype(bool)` for the mask, `np.s_[{argument}, ...]` for "
      "the rows (in a spec file, a list of True/False for the mask, or the "
      "list followed by ', ...' for the rows).")


def _axes_indexed(parts: Sequence[CheckedComponent]) -> int:
  """How many axes `parts` index, as NumPy counts them."""
  count = 0
  for part in parts:
    if part is None or part is Ellipsis or isinstance(part, (bool, np.bool_)):
      continue
    if isinstance(part, np.ndarray) and part.dtype == bool:
      count += part.ndim
    else:
      count += 1
  return count


def _check_structure(shape: Sequence[int], checked: CheckedIndex,
                     index: object, described: str, argument: str) -> None:
  """IndexError for an index no variable of `shape` can take, as NumPy."""
  parts = checked if isinstance(checked, tuple) else (checked,)
  ellipses = sum(part is Ellipsis for part in parts)
  if ellipses > 1:
    raise IndexError(
        f"`{argument}` {_show(index)} for {described} has {ellipses} "
        "Ellipsis ('...'); an index holds at most one.")
  axes = _axes_indexed(parts)
  if axes > len(shape):
    raise IndexError(
        f"`{argument}` {_show(index)} has too many indices for {described}: "
        f"it indexes {axes} axes and the variable has {len(shape)}.")


def check_index(index: object, described: str,
                argument: str = "index") -> CheckedIndex:
  """`index` with every component checked and turned into a NumPy value."""
  if isinstance(index, tuple):
    return tuple(_check_component(c, index, described, argument)
                 for c in index)
  return _check_component(index, index, described, argument)


def _check_component(component: object, index: object, described: str,
                     argument: str) -> CheckedComponent:
  """One component of an index, checked and turned into a NumPy value."""
  if component is None or component is Ellipsis:
    return component
  if isinstance(component, (bool, np.bool_)):
    return component
  if isinstance(component, (int, np.integer)):
    return operator.index(component)
  if isinstance(component, slice):
    for part in (component.start, component.stop, component.step):
      if part is not None and not _is_integer(part):
        raise TypeError(
            f"`{argument}` {_show(index)} for {described} has a slice bound "
            f"{part!r} of type {type(part).__name__}; slice bounds must be "
            "integers or None.")
    if component.step is not None and operator.index(component.step) == 0:
      raise ValueError(
          f"`{argument}` {_show(index)} for {described} has a slice step of "
          "0.")
    return component
  if isinstance(component, (str, bytes)):
    raise TypeError(
        f"`{argument}` {_show(index)} for {described} is a string; use "
        "integers, slices, integer arrays or a boolean mask (a spec file "
        "holds index text; `tfpartial.load_spec` reads it).")
  if isinstance(component, (float, complex, np.floating, np.complexfloating)):
    raise TypeError(
        f"`{argument}` {_show(index)} for {described} holds the "
        f"{type(component).__name__} {component}; indices must be "
        "integers, slices or boolean masks.")
  if isinstance(component, tf.Tensor):
    component = _tensor_value(component, index, described, argument)
  if isinstance(component, np.ndarray) and component.ndim == 0:
    # NumPy takes a 0-d array as the scalar it holds.
    return _check_component(component[()], index, described, argument)
  if isinstance(component, (list, np.ndarray, range)):
    return _check_array(component, index, described, argument)
  raise TypeError(
      f"`{argument}` {_show(index)} for {described} has a component of type "
      f"{type(component).__name__}; indices must be integers, slices, "
      "Ellipsis, None, integer arrays or boolean masks.")


def _check_array(component: Union[Sequence[object], np.ndarray],
                 index: object, described: str, argument: str) -> np.ndarray:
  try:
    array = np.asarray(component)
  except (TypeError, ValueError) as error:
    raise TypeError(
        f"`{argument}` {_show(index)} for {described} is not a regular "
        f"array: {str(error).rstrip('.')}.") from None
  if array.size == 0 and not isinstance(component, np.ndarray):
    # NumPy reads an empty list as an empty integer index (an empty float
    # array it refuses).
    return array.astype(np.intp)
  if array.dtype == bool or array.dtype.kind in _INTEGER_KINDS:
    return array
  hint = ""
  if array.dtype.kind == "f":
    # A TF1 habit: a mask of 0.0/1.0, which `astype(int)` would make rows.
    zero_one = bool(((array == 0) | (array == 1)).all())
    hint = (" A 0/1 mask is `mask.astype(bool)`, not `astype(int)`, which "
            "NumPy reads as the row numbers 0 and 1." if zero_one else
            f" Row numbers are `{argument}.astype(int)`; a mask is boolean.")
  raise TypeError(
      f"`{argument}` {_show(index)} for {described} is an array of dtype "
      f"{array.dtype}; index arrays must hold integers or booleans.{hint}")


def _tensor_value(tensor: tf.Tensor, index: object, described: str,
                  argument: str) -> np.ndarray:
  # Can run inside a graph: a symbolic tensor has no value to select with.
  if tf.is_symbolic_tensor(tensor):
    raise TypeError(
        f"`{argument}` for {described} is the symbolic tensor "
        f"'{tensor.name}'; pass a NumPy value or an eager tensor.")
  return np.asarray(tensor.numpy())


def _is_integer(value: object) -> bool:
  if isinstance(value, (bool, np.bool_)):
    return False
  try:
    # Any object: operator.index raises TypeError unless it has __index__.
    operator.index(cast(SupportsIndex, value))
  except TypeError:
    return False
  return True


def _show(index: object) -> str:
  text = repr(index)
  return text if len(text) <= 60 else text[:57] + "..."
