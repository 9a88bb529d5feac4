"""A Keras `.keras` archive, read as data.

The archive is a zip file holding `config.json` (the model's description)
and `model.weights.h5` (its variables). Both are read, never run: the
config only names the layers' classes for `_keras_names`, and the weights
are read in place from the zip file (Keras stores them uncompressed), one
variable at a time.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zipfile
from typing import TYPE_CHECKING, Hashable, List, Optional, Tuple, Union

import numpy as np

from tfpartial._frozen import _files
from tfpartial._frozen._safejson import JSON
from tfpartial._tools.verify import _checkpoints
from tfpartial._tools.verify import _keras_files
from tfpartial._tools.verify import _keras_legacy
from tfpartial._tools.verify import _keras_names
from tfpartial._tools.verify._keras_names import Config

if TYPE_CHECKING:
  from _typeshed import WriteableBuffer

_CONFIG_LIMIT = 64 * 2**20  # Bytes of config.json; a model's is kilobytes.


class Archive:
  """A `.keras` archive: its `model.weights.h5`, named with `config.json`."""

  layout = "keras"  # As a `.weights.h5` file's.

  def __init__(self, path: str):
    self.path = path
    self.file = path
    self._raw = _files.open_regular(path)
    try:
      self._zip, self._weights = _open(self._raw, path)
    except BaseException:
      self._raw.close()
      raise

  def find(self, name: str, shape: Optional[Tuple[int, ...]] = None
           ) -> _checkpoints.Stored:
    """The variable the spec calls `name`, as in a `.weights.h5` file."""
    return self._weights.find(name, shape)

  def read(self, stored: _checkpoints.Stored) -> np.ndarray:
    return self._weights.read(stored)

  def names(self) -> List[str]:
    return self._weights.names()

  @property
  def saved_format(self) -> Optional[str]:
    return getattr(self._weights, "saved_format", None)

  def unnamed(self) -> List[str]:
    return self._weights.unnamed()

  def at(self, key: str) -> List[Tuple[Hashable, _checkpoints.Stored]]:
    return list(self._weights.at(key))

  def holds(self, stored: _checkpoints.Stored, name: str) -> bool:
    return self._weights.holds(stored, name)

  def layer_of(self, stored: _checkpoints.Stored) -> Optional[str]:
    return self._weights.layer_of(stored)

  def is_root(self, anchor: Hashable) -> bool:
    return self._weights.is_root(anchor)

  def close(self) -> None:
    self._weights.close()
    self._zip.close()
    self._raw.close()


def _open(raw: io.BufferedReader, path: str) -> Tuple[
    zipfile.ZipFile,
    Union[_keras_files.WeightsFile, _keras_legacy.LegacyWeightsFile]]:
  """The zip archive in `raw` and the reader of its model.weights.h5."""
  try:
    archive = zipfile.ZipFile(raw)
  except (zipfile.BadZipFile, OSError, ValueError) as error:
    raise ValueError(f"cannot read {path}: not a .keras archive "
                     f"({_checkpoints.first_line(error)})") from None
  try:
    member = _weights_member(archive, path)
    config = _read_config(archive, path)
    start = _data_offset(raw, member, path)
    if start + member.file_size > os.fstat(raw.fileno()).st_size:
      raise ValueError(f"cannot read {path}: model.weights.h5 runs past the "
                       "end of the archive")
    window = _Window(raw, start, member.file_size)
    return archive, _keras_files.open_h5(
        path, opened=window, size=member.file_size, config=config)
  except BaseException:
    archive.close()
    raise


def _weights_member(archive: zipfile.ZipFile, path: str) -> zipfile.ZipInfo:
  try:
    member = archive.getinfo("model.weights.h5")
  except KeyError:
    raise ValueError(
        f"{path} holds no model.weights.h5 (a .keras archive of Keras 3 "
        "holds its weights there; sharded archives are not read)") from None
  if member.compress_type != zipfile.ZIP_STORED:
    raise ValueError(
        f"{path} holds model.weights.h5 compressed; Keras writes it "
        "uncompressed: unzip the archive and verify model.weights.h5")
  return member


def _read_config(archive: zipfile.ZipFile, path: str
                 ) -> Optional[Config]:
  try:
    member = archive.getinfo("config.json")
  except KeyError:
    return None
  if member.file_size > _CONFIG_LIMIT:
    raise ValueError(f"{path}: config.json is {member.file_size} bytes; "
                     f"verify reads at most {_CONFIG_LIMIT}")
  try:
    with archive.open(member) as file:
      config: JSON = json.loads(file.read(_CONFIG_LIMIT + 1))
    return _keras_names.check_config(config)
  except (ValueError, RecursionError, OSError, zipfile.BadZipFile) as error:
    raise ValueError(f"{path}: config.json is not a model's config "
                     f"({_checkpoints.first_line(error)})") from None


def _data_offset(raw: io.BufferedReader, member: zipfile.ZipInfo,
                 path: str) -> int:
  """Where a stored member's bytes start in the zip file."""
  raw.seek(member.header_offset)
  header = raw.read(30)
  if len(header) != 30 or header[:4] != b"PK\x03\x04":
    raise ValueError(f"cannot read {path}: model.weights.h5 has a damaged "
                     "zip header")
  name_length: int
  extra_length: int
  name_length, extra_length = struct.unpack("<HH", header[26:30])
  return member.header_offset + 30 + name_length + extra_length


class _Window(io.RawIOBase):
  """The bytes [start, start + size) of a file, as a file h5py can read."""

  def __init__(self, raw: io.BufferedReader, start: int, size: int):
    super().__init__()
    self._raw, self._start, self._size, self._position = raw, start, size, 0

  def readable(self) -> bool:
    return True

  def seekable(self) -> bool:
    return True

  def tell(self) -> int:
    return self._position

  def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
    base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position,
            io.SEEK_END: self._size}[whence]
    self._position = max(0, base + offset)
    return self._position

  def readinto(self, buffer: WriteableBuffer) -> int:
    view = memoryview(buffer)  # As long as `buffer`.
    wanted = min(len(view), max(0, self._size - self._position))
    self._raw.seek(self._start + self._position)
    count = self._raw.readinto(view[:wanted])
    self._position += count
    return count
