"""HDF5 files as untrusted input: opened as regular files, read bounded.

`open_file` opens a Keras HDF5 file (or takes the window of a `.keras`
archive that holds one) through `_frozen/_files.open_regular`, so a FIFO or a
device is refused before h5py reads a byte; `Reader` is what the Keras
readers share: reading one dataset (`read`), refused unless its declared
size fits in the file, since Keras writes its weights uncompressed and a
hand-made header could otherwise ask for any amount of memory.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Optional, Tuple, Union

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _files
from tfpartial._tools.verify import _checkpoints
from tfpartial._tools.verify._checkpoints import Stored

if TYPE_CHECKING:  # Imported where a file is opened; untyped (mypy.ini).
  from h5py import Dataset, File

Opened = Union[io.RawIOBase, io.BufferedIOBase]


def open_file(path: str, opened: Optional[Opened] = None,
              size: Optional[int] = None) -> Tuple[File, Opened, int]:
  """The h5py file of `path` (or of `opened`, `size` bytes long), the file
  object under it and its size in bytes."""
  import h5py  # pylint: disable=g-import-not-at-top
  owned = opened is None
  if opened is None:
    regular = _files.open_regular(path)
    opened, size = regular, os.fstat(regular.fileno()).st_size
  assert size is not None  # Given with `opened`.
  try:
    return h5py.File(opened, "r"), opened, size
  except (OSError, ValueError) as error:
    if owned:
      opened.close()
    reason = _checkpoints.first_line(error)
    if "signature" in reason:
      reason = "not an HDF5 file"
    raise ValueError(f"cannot read {path}: {reason}") from None


class Reader:
  """What the readers of Keras HDF5 files share: one open file."""

  layout = ""

  def __init__(self, path: str, file: File, opened: Opened, size: int):
    self.path = path
    self.file = path
    self._file, self._opened, self._size = file, opened, size

  def read(self, stored: Stored) -> np.ndarray:
    """One variable's value, as the dtype Keras wrote."""
    return read(self._file, stored, self.path, self._size)

  def close(self) -> None:
    self._file.close()
    self._opened.close()


def read(file: File, stored: Stored, path: str, limit: int) -> np.ndarray:
  """The dataset `stored.key`; ValueError if it cannot be read or declares
  more bytes than the file (`limit` bytes) holds."""
  try:
    dataset = file[stored.key]
    size = int(np.prod(dataset.shape, dtype=np.float64)) * (
        dataset.dtype.itemsize)
    if size > limit:
      raise ValueError(
          f"its shape {tuple(dataset.shape)} needs {size} bytes, more than "
          f"the whole file holds ({limit}); Keras writes weights "
          "uncompressed")
    value = np.asarray(dataset[()])
  except (OSError, ValueError, KeyError, RuntimeError, TypeError) as error:
    raise ValueError(f"cannot read '{stored.key}' from {path}: "
                     f"{_checkpoints.first_line(error)}") from None
  if value.dtype.kind == "V" and stored.dtype != "opaque":
    value = value.view(tf.as_dtype(stored.dtype).as_numpy_dtype)
  return value


def dtype_name(dataset: Dataset) -> str:
  """`float32`, `bfloat16` (Keras marks it: HDF5 has no such type), ..."""
  marked = dataset.attrs.get("dtype")
  if isinstance(marked, bytes):
    marked = marked.decode("ascii", "replace")
  if dataset.dtype.kind == "V":
    try:
      known = tf.as_dtype(marked).as_numpy_dtype
    except TypeError:
      return "opaque"
    if np.dtype(known).itemsize == dataset.dtype.itemsize:
      return str(marked)
    return "opaque"
  if dataset.dtype.kind in "OSU":
    return "string"
  name: str = dataset.dtype.name
  return name


