"""Which elements a criterion selects, from values: NumPy only, no loops.

Every selection here is defined exactly, so that `load_spec` today and
`verify` on another machine next year select the same elements:

- **magnitude**: `|value|`; a NaN ranks above every number (as NumPy sorts
  it), -0.0 and 0.0 are both 0. Integers are ranked exactly (as unsigned
  64-bit magnitudes), never through a float.
- **ties** break by flat (row-major) position, lowest first; across several
  variables, by the order of the variables given, then position.
- **how many** a fraction F of n elements is: `floor(F * n + 0.5)`, at
  least 1 (when n > 0), at most n.
- **random**: each element's key is the SplitMix64 output for its flat
  position p (state `key + (p + 1) * 0x9E3779B97F4A7C15`, modulo 2**64,
  then SplitMix64's mix), where `key` is the first 8 bytes (little-endian)
  of the SHA-256 of `tfpartial.random`, the seed, the shape and the name
  (`random_key`); the selected elements are the k of smallest key. Only
  integer arithmetic modulo 2**64 and SHA-256: the same on every machine
  and NumPy version.

Top-k costs time linear in the elements (`np.partition`, then the ties at
the threshold in position order); N:M costs a sort of each group of M.
"""

from __future__ import annotations

import hashlib
import math
from typing import List, Sequence, Tuple

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def count_of(fraction: float, size: int) -> int:
  """How many elements a fraction selects of `size`: `floor(F * n + 0.5)`,
  at least 1 and at most `size` (0 of nothing).

  >>> count_of(0.01, 8192), count_of(0.5, 3), count_of(0.001, 10)
  (82, 2, 1)
  """
  if size <= 0:
    return 0
  return min(size, max(1, math.floor(fraction * size + 0.5)))


def magnitude_keys(values: np.ndarray) -> np.ndarray:
  """A flat key per element that sorts as its magnitude (NaN largest).

  Floats give float32 or float64 (+inf for NaN, above every finite
  magnitude, tied with infinities); integers give exact uint64 magnitudes.

  Raises:
    TypeError: the values are not numbers (bool, strings).
  """
  flat = np.asarray(values).reshape(-1)
  kind = flat.dtype.kind
  if kind in "iu":
    if kind == "u":
      return flat.astype(np.uint64)
    signed = flat.astype(np.int64)
    # |int64 min| does not fit int64: negate as unsigned, exactly.
    negative = signed < 0
    keys = signed.astype(np.uint64)
    keys[negative] = (~keys[negative]) + np.uint64(1)
    return keys
  if kind == "b" or kind in "OSUV" and not _converts(flat):
    raise TypeError(f"values of dtype {flat.dtype} have no magnitude")
  # |x| of a float of 32 bits or fewer is exact in float32: half the
  # memory and time of float64.
  narrow = kind in "fV" and flat.dtype.itemsize <= 4
  wide = np.complex128 if kind == "c" else np.float64
  with np.errstate(invalid="ignore"):
    keys = np.abs(flat.astype(np.float32 if narrow else wide))
  keys[np.isnan(keys)] = np.inf
  return keys


def _converts(flat: np.ndarray) -> bool:
  """Whether an ml_dtypes array (bfloat16, float8) converts to float64."""
  try:
    flat[:0].astype(np.float64)
  except (TypeError, ValueError):
    return False
  return flat.dtype.kind == "V" and flat.dtype.names is None


def extreme(keys: np.ndarray, count: int, largest: bool) -> np.ndarray:
  """A flat bool mask of the `count` largest (or smallest) keys, ties by
  lowest position.

  >>> extreme(np.array([3.0, 1.0, 3.0, 2.0]), 2, largest=True)
  array([ True, False,  True, False])
  >>> extreme(np.array([1.0, 1.0, 1.0]), 2, largest=False)
  array([ True,  True, False])
  """
  size = keys.size
  mask: np.ndarray = np.zeros(size, dtype=bool)
  if count <= 0:
    return mask
  if count >= size:
    mask[:] = True
    return mask
  if largest:
    threshold = np.partition(keys, size - count)[size - count]
    mask = keys > threshold
  else:
    threshold = np.partition(keys, count - 1)[count - 1]
    mask = keys < threshold
  missing = count - int(np.count_nonzero(mask))
  mask[np.flatnonzero(keys == threshold)[:missing]] = True
  return mask


def extreme_across(keys: Sequence[np.ndarray], count: int,
                   largest: bool) -> List[np.ndarray]:
  """`extreme` over the concatenation of `keys`, split back per array."""
  if not keys:
    return []
  joined = extreme(np.concatenate([k.reshape(-1) for k in keys]), count,
                   largest)
  bounds = np.cumsum([0] + [k.size for k in keys])
  return [joined[start:stop] for start, stop in zip(bounds[:-1], bounds[1:])]


def n_of_m(values: np.ndarray, n: int, m: int, axis: int) -> np.ndarray:
  """A bool mask of `values`' shape: in each group of `m` consecutive
  elements along `axis`, the `n` of largest magnitude (ties: lowest
  position). The caller checks that `m` divides the axis.

  >>> n_of_m(np.array([[1.0, -4.0, 3.0, 0.0]]), 2, 4, -1)
  array([[False,  True,  True, False]])
  """
  shape: Tuple[int, ...] = tuple(values.shape)
  keys = magnitude_keys(values).reshape(shape)
  # Descending order that a stable sort keeps ties in position order in.
  descending = -keys if keys.dtype.kind == "f" else ~keys
  moved: np.ndarray = np.moveaxis(descending, axis, -1)
  length = int(moved.shape[-1])
  groups = moved.reshape(tuple(moved.shape[:-1]) + (length // m, m))
  order = np.argsort(groups, axis=-1, kind="stable")[..., :n]
  chosen = np.zeros(groups.shape, dtype=bool)
  np.put_along_axis(chosen, order, True, axis=-1)
  mask: np.ndarray = np.moveaxis(chosen.reshape(moved.shape), -1, axis)
  return np.ascontiguousarray(mask)


def random_key(seed: int, shape: Tuple[int, ...], name: str) -> int:
  """The 64-bit key of a variable's random selection.

  The first 8 bytes, little-endian, of the SHA-256 of the UTF-8 text
  `tfpartial.random`, NUL, the seed in decimal, NUL, the shape's sizes
  joined by `,`, NUL, the name.
  """
  text = f"tfpartial.random\0{seed}\0{','.join(map(str, shape))}\0{name}"
  digest = hashlib.sha256(text.encode("utf-8")).digest()
  return int.from_bytes(digest[:8], "little")


def random_keys(seed: int, shape: Tuple[int, ...], name: str) -> np.ndarray:
  """SplitMix64's outputs for positions 0.. of the variable's key.

  >>> hex(int(random_keys_from(0, 1)[0]))  # SplitMix64's first, seed 0.
  '0xe220a8397b1dcdaf'
  """
  size = int(np.prod(shape, dtype=np.int64))
  return random_keys_from(random_key(seed, shape, name), size)


def random_keys_from(key: int, size: int) -> np.ndarray:
  """SplitMix64 from state `key`: one uint64 per position (wraps mod 2**64)."""
  # Array arithmetic on uint64 wraps modulo 2**64 without a warning.
  state = np.arange(1, size + 1, dtype=np.uint64) * _GOLDEN
  state += np.uint64(key)
  state = (state ^ (state >> np.uint64(30))) * _MIX[0]
  state = (state ^ (state >> np.uint64(27))) * _MIX[1]
  mixed: np.ndarray = state ^ (state >> np.uint64(31))
  return mixed
