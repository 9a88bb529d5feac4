"""Mask files a spec names: confined to the spec's folder, checked, bounded;
and written beside a spec, never overwriting one.

A spec file is shared and reviewed, so what it names is untrusted input:
`{"npy": NAME}` may only name a file inside the spec file's folder (no
absolute path, no `..`, no symlink that leads out), it must be a regular
`.npy` file holding a boolean array, and its header must agree with its
size on disk and with the variable's shape before any data is read. The
file is confined and opened by `_files`, so a pipe or device never hangs a
load.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import os
import pathlib
import re
import secrets
from typing import BinaryIO, Iterator, Sequence, Tuple

import numpy as np

from tfpartial._frozen import _files

_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"
_MAX_HEADER = 10_000  # As NumPy >= 1.24 limits it; a bool mask needs ~120.


@dataclasses.dataclass(frozen=True)
class MaskFile:
  """A `.npy` mask a spec names: checked now, read for a variable later.

  The data is read by `load`, once the variable's shape is known, so that a
  header promising more than the variable holds is refused unread.
  """

  path: pathlib.Path
  name: str  # As the spec names it, for messages.
  where: str  # `'x' in the spec`, for messages.
  shape: Tuple[int, ...]

  def load(self, shape: Sequence[int], described: str) -> np.ndarray:
    """The mask, checked against `shape` (full, or leading axes) first.

    Raises:
      ValueError: the file changed or does not fit the variable.
    """
    with _open(self.path, self.name, self.where) as (file, size):
      header = _header(file, size, self.name, self.where)
      mask_shape = header[0]
      shape = tuple(shape)
      if mask_shape != shape[:len(mask_shape)] or not mask_shape and shape:
        raise ValueError(
            f"{self.where}: '{self.name}' holds a mask of shape "
            f"{mask_shape}, which does not fit {described}; a mask has the "
            "variable's shape, or that of its leading axes.")
      count = int(np.prod(mask_shape, dtype=np.int64))
      data = file.read(count)
    if len(data) != count:
      raise ValueError(f"{self.where}: '{self.name}' changed while it was "
                       "read.")
    order = "F" if header[1] else "C"
    # Any nonzero byte is True, as NumPy reads bool; the copy is writable.
    mask: np.ndarray = (np.frombuffer(data, np.uint8) != 0).reshape(
        mask_shape, order=order)
    return mask


def open_mask(directory: pathlib.Path, name: str, where: str) -> MaskFile:
  """The mask file `name` in `directory`, confined and its header checked.

  Raises:
    ValueError: `name` leaves the folder, or the file is not a boolean
      `.npy` whose header agrees with its size.
  """
  path = confine(directory, name, where)
  with _open(path, name, where) as (file, size):
    shape, _ = _header(file, size, name, where)
  return MaskFile(path, name, where, shape)


def confine(directory: pathlib.Path, name: str, where: str) -> pathlib.Path:
  """`directory / name`, refused unless it stays inside `directory`."""
  try:
    return _files.confined(directory, name, "the spec file's folder")
  except _files.Refused as error:
    raise ValueError(f"{where}: {error}.") from None


@contextlib.contextmanager
def _open(path: pathlib.Path, name: str,
          where: str) -> Iterator[Tuple[BinaryIO, int]]:
  """The open regular file and its size; a pipe or device is refused."""
  try:
    opened = _files.open_regular(path)
  except _files.Refused as error:
    raise ValueError(
        f"{where}: cannot read '{name}': {error.problem}.") from None
  with opened as file:
    yield file, os.fstat(file.fileno()).st_size


def _header(file: BinaryIO, size: int, name: str,
            where: str) -> Tuple[Tuple[int, ...], bool]:
  """(shape, fortran_order) from the header, checked against `size`."""
  start = file.read(len(_MAGIC))
  if start != _MAGIC:
    kind = (" it is a zip archive (an .npz?); save one mask with np.save"
            if start.startswith(_ZIP_MAGIC) else
            " it does not start as NumPy's np.save writes one")
    raise ValueError(f"{where}: '{name}' is not a .npy file:{kind}.")
  file.seek(0)
  try:
    version = np.lib.format.read_magic(file)
    length_bytes = {(1, 0): 2, (2, 0): 4}.get(version, 0)
    length = int.from_bytes(file.read(length_bytes), "little")
    if length > _MAX_HEADER:
      raise ValueError(f"a header of {length} bytes is past {_MAX_HEADER}")
    file.seek(len(_MAGIC) + 2)
    if version == (1, 0):
      shape, fortran, dtype = np.lib.format.read_array_header_1_0(file)
    elif version == (2, 0):
      shape, fortran, dtype = np.lib.format.read_array_header_2_0(file)
    else:
      raise ValueError(f"format version {version} is not 1.0 or 2.0")
  except (ValueError, TypeError, SyntaxError, EOFError) as error:
    raise ValueError(f"{where}: '{name}' is damaged: its .npy header cannot "
                     f"be read ({error}).") from None
  if dtype != np.dtype(bool):
    # Numbers are a TF1 habit (0/1 masks); a mask file is never row numbers.
    hint = ("; save a 0/1 mask as `mask.astype(bool)` (row numbers belong "
            "in index text, such as \"[0, 5, 9]\")"
            if dtype.kind in "iuf" else "")
    raise ValueError(f"{where}: '{name}' holds {dtype} values, not a boolean "
                     f"mask{hint}.")
  data_bytes = int(np.prod(shape, dtype=object))  # Exact, however large.
  if file.tell() + data_bytes != size:
    raise ValueError(
        f"{where}: '{name}' is damaged: its header promises shape {shape}, "
        f"{data_bytes} bytes of data, but the file holds "
        f"{size - file.tell()}.")
  return tuple(shape), bool(fortran)


# --- Writing ---------------------------------------------------------------

def file_name(stem: str, name: str, mask: np.ndarray) -> str:
  """`spec.dense_kernel.3f9a0c1d2e4b.npy` for variable `dense/kernel`'s mask.

  After the spec's file name, the variable's and a digest of both and of
  the mask: two variables never share a file (`a/b` and `a_b` would, by
  name alone, and `A` and `a` on a case-insensitive disk), and a changed
  mask is a new file, so an earlier spec still reads the masks it names.
  """
  digest = hashlib.sha256()
  digest.update(name.encode("utf-8") + b"\0" + repr(mask.shape).encode())
  digest.update(np.packbits(mask).tobytes())
  safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:64]
  return f"{stem}.{safe}.{digest.hexdigest()[:12]}.npy"


def write_mask(folder: pathlib.Path, name: str, mask: np.ndarray) -> None:
  """Writes `mask` to `folder / name`, unless that file holds it already.

  Raises:
    ValueError: the file exists and holds something else; a mask file is
      never overwritten.
  """
  path = folder / name
  if path.exists() or path.is_symlink():
    try:
      held = open_mask(folder, name, "the spec").load(mask.shape, "this mask")
    except ValueError:
      held = None
    if held is None or not np.array_equal(held, mask):
      raise ValueError(
          f"'{name}' already exists beside the spec file and holds "
          "another mask; move it away, or write the spec to another path.")
    return
  buffer = io.BytesIO()
  np.save(buffer, mask, allow_pickle=False)
  write_atomically(path, buffer.getvalue())


def write_atomically(path: pathlib.Path, data: bytes) -> None:
  """Writes `data` to `path` whole or not at all (a new file, then renamed)."""
  temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
  descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
  try:
    with os.fdopen(descriptor, "wb") as file:
      file.write(data)
    os.replace(temporary, path)
  except BaseException:
    temporary.unlink(missing_ok=True)
    raise
