"""Reading checkpoints variable by variable, whoever wrote them.

A folder or a TF1 `Saver` / TF2 `tf.train.Checkpoint` prefix reads through
`tf.train.load_checkpoint` (`TensorFlowCheckpoint`, here); a Keras `.keras`
archive or `.weights.h5` file reads as data through h5py (`_keras_files`,
`_keras_archive`, which build on this module); `_verify.open_checkpoint`
picks the reader from the path. Each reader finds a spec's name (`find`),
returning where the variable is stored with its shape and dtype, and reads
one variable at a time (`read`). Anything wrong with a file is a ValueError
of one line.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Dict, Iterable, Optional, Protocol, Tuple

import numpy as np
import tensorflow as tf

_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


@dataclasses.dataclass(frozen=True)
class Stored:
  """Where a checkpoint holds one variable, its shape and its dtype's name."""

  key: str
  shape: Tuple[int, ...]
  dtype: str


class Reader(Protocol):
  """What `tfpartial verify` reads a checkpoint with, whoever wrote it.

  `layout` names how its keys say where a variable is restored from:
  two checkpoints of one layout must hold a spec's variable at one key.
  """

  layout: str
  path: str

  def find(self, name: str, shape: Optional[Tuple[int, ...]] = None
           ) -> Stored:
    """Where the variable the spec calls `name` is; ValueError if nowhere
    or not one."""

  def read(self, stored: Stored) -> np.ndarray:
    """One variable's value; ValueError if it cannot be read."""

  def close(self) -> None: ...


def first_line(error: BaseException) -> str:
  """An exception's message as one line (TensorFlow's run to several)."""
  lines = str(error).strip().splitlines()
  return lines[0] if lines else type(error).__name__


class TensorFlowCheckpoint:
  """A TF1 `Saver` or TF2 `tf.train.Checkpoint` checkpoint.

  A TF2 key such as `model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE` is known
  by the plain name `model/dense/kernel`; optimizer slots are left out.
  """

  layout = "tensorflow"

  def __init__(self, path: str):
    if os.path.isdir(path):
      latest = tf.train.latest_checkpoint(path)
      if latest is None:
        raise ValueError(f"no checkpoint in the folder {path}")
      path = latest
    self.path = path
    try:
      self._reader = tf.train.load_checkpoint(path)
      shapes = self._reader.get_variable_to_shape_map()
      dtypes = self._reader.get_variable_to_dtype_map()
    except (tf.errors.OpError, ValueError, OSError) as error:
      raise ValueError(f"cannot read the checkpoint {path}: "
                       f"{first_line(error)}") from None
    self._stored: Dict[str, Stored] = {}
    for key, shape in shapes.items():
      if ".OPTIMIZER_SLOT" in key or key == "_CHECKPOINTABLE_OBJECT_GRAPH":
        continue
      name = key[:-len(_VALUE_SUFFIX)] if key.endswith(_VALUE_SUFFIX) else key
      if "/.ATTRIBUTES/" in name:
        continue
      self._stored[name] = Stored(key, tuple(shape), dtypes[key].name)

  def find(self, name: str, shape: Optional[Tuple[int, ...]] = None
           ) -> Stored:
    """The variable the spec calls `name`: exact, or a unique ending
    (`dense/kernel` finds `model/dense/kernel`)."""
    del shape  # Names in a TF checkpoint are complete.
    if name in self._stored:
      return self._stored[name]
    matches = sorted(key for key in self._stored if key.endswith("/" + name))
    if len(matches) == 1:
      return self._stored[matches[0]]
    if matches:
      raise ValueError(
          f"'{name}' matches several variables in {self.path}: "
          f"{', '.join(matches)}; name one of them in the spec")
    raise ValueError(f"'{name}' is not a variable of {self.path} "
                     f"(it has {listing(self._stored)})")

  def read(self, stored: Stored) -> np.ndarray:
    """One variable's value; ValueError if the files are missing or damaged."""
    try:
      return np.asarray(self._reader.get_tensor(stored.key))
    except (tf.errors.OpError, IndexError, ValueError, OSError) as error:
      name = stored.key.replace(_VALUE_SUFFIX, "")
      raise ValueError(f"cannot read '{name}' from {self.path}: "
                       f"{first_line(error)}") from None

  def close(self) -> None:
    pass


def listing(names: Iterable[str], limit: int = 12) -> str:
  """`a, b, c, ... (40 in all)`: what a checkpoint holds, for an error."""
  ordered = sorted(names)
  shown = ", ".join(ordered[:limit])
  return shown + ("" if len(ordered) <= limit
                  else f", ... ({len(ordered)} in all)")
