"""The shortest index text that selects a given set of elements.

`to_json` writes what a person reviewing a spec file can read: a column as
`":, 0"`, a block as `"2:5, 1:3"`, every other row as `"::2"`, and element
coordinates (`"[0, 2], [1, 3]"`) only for elements that form no such
pattern. A set of elements has a short form when it is a product of one set
per axis; each axis then reads as `:`, an integer, a slice (with a step when
three or more indices are evenly spaced) or a list, and several lists are
nested so that NumPy broadcasts them to their product. Indices are written
as positions, never counted from the end: each number reads as it is, beside
the entry's "shape". Everything here is linear in the size of the mask, or
of the row set for rows.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple, cast

import numpy as np

from tfpartial._frozen._selection import Selection


def shortest(selection: Selection, limit: int) -> Tuple[str, Optional[str]]:
  """("freeze" or "train_only", text) for `selection`, the text shortest.

  Args:
    selection: a `_selection` value.
    limit: the longest text wanted; past it the text is None, and the kind
      is the one whose mask a `.npy` file should hold.

  Returns:
    The kind and the index text of the elements it names, or None.
  """
  if selection.is_everything:
    return "freeze", "..."
  if selection.is_empty:
    return "train_only", "..."
  row_set = selection.row_set
  if row_set is not None:
    rows, count = row_set.rows, row_set.row_count
    named = ("train_only", "freeze") if row_set.trains else (
        "freeze", "train_only")
    candidates = [(named[0], _rows_text(rows, count, limit))]
    if not selection.compact:  # Only train_only entries can say "compact".
      candidates.append((named[1], _other_rows_text(rows, count, limit)))
  else:
    frozen = selection.frozen_mask()
    candidates = [("train_only", mask_text(~frozen, limit))]
    if not selection.compact:  # A tie goes to "freeze", written first.
      candidates.insert(0, ("freeze", mask_text(frozen, limit)))
  written = [(kind, text) for kind, text in candidates if text is not None]
  if written:
    return min(written, key=lambda candidate: len(candidate[1]))
  return ("train_only" if selection.compact else "freeze"), None


def mask_text(mask: np.ndarray, limit: int) -> Optional[str]:
  """Index text selecting exactly the True elements of `mask`, or None.

  `mask` has at least one True and one False element. None when every
  text is longer than `limit`.
  """
  shape = mask.shape
  if mask.ndim == 1:
    return _rows_text(np.flatnonzero(mask), shape[0], limit)
  per_axis = [np.flatnonzero(mask.any(axis=tuple(
      other for other in range(mask.ndim) if other != axis)))
              for axis in range(mask.ndim)]
  count = int(np.count_nonzero(mask))
  texts = []
  if count == int(np.prod([len(chosen) for chosen in per_axis])):
    texts.append(_product_text(per_axis, shape, limit))
  # Each coordinate takes at least three characters (a digit and ", "):
  # past that, the coordinates are not even listed.
  if ((not texts or texts[0] is None or count <= 64)
      and 3 * count * mask.ndim <= limit + 2):
    texts.append(_coordinates_text(np.nonzero(mask), limit))
  written = [text for text in texts if text is not None]
  return min(written, key=len) if written else None


def _rows_text(rows: np.ndarray, count: int, limit: int) -> Optional[str]:
  """The text selecting whole rows `rows` (sorted, unique) of `count`."""
  text = _axis_text(rows, count)
  if text is None:
    text = _list_text(rows, limit)
  return text if text is not None and len(text) <= limit else None


def _other_rows_text(rows: np.ndarray, count: int,
                     limit: int) -> Optional[str]:
  """`_rows_text` of every row not in `rows`, in memory in proportion to
  `rows` where the other rows could only be written as a long list."""
  if 2 * rows.size + 2 >= count:
    others = np.setdiff1d(np.arange(count, dtype=np.int64), rows,
                          assume_unique=True)
    return _rows_text(others, count, limit) if others.size else None
  # More than half the rows remain: no evenly spaced step can hold them, so
  # they have a short form only as the one block between a run from row 0
  # and a run to the last row.
  leading = int(np.count_nonzero(rows == np.arange(rows.size)))
  trailing = rows[leading:]
  if trailing.size and not (trailing[-1] == count - 1 and
                            trailing[-1] - trailing[0] + 1 == trailing.size):
    return None
  stop = count - trailing.size
  return _slice_text(leading, stop - 1, 1, count)


def _product_text(per_axis: Sequence[np.ndarray], shape: Sequence[int],
                  limit: int) -> Optional[str]:
  """The text of the product of one set of indices per axis."""
  parts: List[Optional[str]] = [_axis_text(chosen, size)
                                for chosen, size in zip(per_axis, shape)]
  lists = [axis for axis, part in enumerate(parts) if part is None]
  for position, axis in enumerate(lists):
    # Nested so that NumPy broadcasts the lists to their product.
    depth = len(lists) - 1 - position
    parts[axis] = _list_text(per_axis[axis], limit, depth)
    if parts[axis] is None:
      return None
  text = _join([part for part in parts if part is not None])
  return text if len(text) <= limit else None


def _coordinates_text(coordinates: Sequence[np.ndarray],
                      limit: int) -> Optional[str]:
  """One list per axis: the coordinates of each element."""
  length = sum(_list_length(axis) for axis in coordinates)
  if length + 2 * (len(coordinates) - 1) > limit:
    return None
  # None for none of them: together they are within `limit`.
  return ", ".join(cast(str, _list_text(axis, limit)) for axis in coordinates)


def _axis_text(chosen: np.ndarray, size: int) -> Optional[str]:
  """`:`, an integer or a slice selecting `chosen` on an axis of `size`;
  None where only a list does."""
  if chosen.size == size:
    return ":"
  if chosen.size == 1:
    return str(int(chosen[0]))
  steps = np.diff(chosen)
  if steps[0] == 1 and chosen[-1] - chosen[0] + 1 == chosen.size:
    return _slice_text(int(chosen[0]), int(chosen[-1]), 1, size)
  # A step for three or more evenly spaced indices; two read better listed.
  if chosen.size >= 3 and (steps == steps[0]).all():
    return _slice_text(int(chosen[0]), int(chosen[-1]), int(steps[0]), size)
  return None


def _slice_text(first: int, last: int, step: int, size: int) -> str:
  start = "" if first == 0 else str(first)
  stop = "" if last + step >= size else str(last + 1)
  return f"{start}:{stop}" + ("" if step == 1 else f":{step}")


def _list_text(values: np.ndarray, limit: int, depth: int = 0
               ) -> Optional[str]:
  """`[1, 5, 9]`; with `depth`, each value nested (`[[1], [5], [9]]`).

  None, without writing it, when the text would be longer than `limit`.
  """
  if _list_length(values, depth) > limit:
    return None
  numbers: Iterable[str] = map(str, values.tolist())
  if depth:
    numbers = ("[" * depth + number + "]" * depth for number in numbers)
  text = "[" + ", ".join(numbers) + "]"
  return text if len(text) <= limit else None


def _list_length(values: np.ndarray, depth: int = 0) -> int:
  """The length of `_list_text(values, depth)` (non-negative values)."""
  top = int(values.max()) if values.size else 0
  digits = values.size + sum(int(np.count_nonzero(values >= 10**power))
                             for power in range(1, len(str(top))))
  return 2 + digits + (2 * depth + 2) * values.size - 2 * (values.size > 0)


def _join(parts: List[str]) -> str:
  """`parts` joined, trailing `:` dropped and a run of them as `...`."""
  while parts and parts[-1] == ":":
    parts.pop()
  run_start, run_length, start = 0, 0, None
  for position, part in enumerate(parts + [""]):
    if part == ":":
      start = position if start is None else start
    elif start is not None:
      if position - start > run_length:
        run_start, run_length = start, position - start
      start = None
  if run_length >= 2:
    parts = parts[:run_start] + ["..."] + parts[run_start + run_length:]
  return ", ".join(parts)
