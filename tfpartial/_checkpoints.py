"""Reading checkpoints variable by variable, whoever wrote them.

TF1 `Saver` files and TF2 `tf.train.Checkpoint` files both read through
`tf.train.load_checkpoint`; a TF2 key such as
`model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE` is known by the plain name
`model/dense/kernel`. Keras `.weights.h5` files read through h5py (which
Keras depends on); there a variable is named `LAYER/INDEX` (`dense/0` for
a Dense layer's kernel), as the file records no variable names.
"""

from __future__ import annotations

import os
from typing import Dict, List, Tuple

import numpy as np
import tensorflow as tf

_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


class Checkpoint:
  """Name -> shape, and one variable's value at a time."""

  def __init__(self, path: str):
    self.path = path
    if str(path).endswith(".h5"):
      self._reader = _H5(path)
    else:
      self._reader = _TensorFlow(path)

  def names(self) -> List[str]:
    return sorted(self._reader.shapes)

  def shape(self, name: str) -> Tuple[int, ...]:
    return self._reader.shapes[name]

  def read(self, name: str) -> np.ndarray:
    return self._reader.read(name)

  def resolve(self, name: str) -> str:
    """The checkpoint's name for the spec's `name`: exact, or a unique
    ending (`dense/kernel` finds `model/dense/kernel`)."""
    shapes = self._reader.shapes
    if name in shapes:
      return name
    matches = [key for key in shapes if key.endswith("/" + name)]
    if len(matches) == 1:
      return matches[0]
    if matches:
      raise ValueError(
          f"'{name}' matches several variables in {self.path}: "
          f"{', '.join(sorted(matches))}; name one of them in the spec")
    known = ", ".join(self.names()[:12])
    more = "" if len(shapes) <= 12 else f", ... ({len(shapes)} in all)"
    raise ValueError(
        f"'{name}' is not a variable of {self.path} (it has {known}{more})")


class _TensorFlow:

  def __init__(self, path: str):
    if os.path.isdir(path):
      latest = tf.train.latest_checkpoint(path)
      if latest is None:
        raise ValueError(f"no checkpoint in the folder {path}")
      path = latest
    try:
      self._reader = tf.train.load_checkpoint(path)
    except (tf.errors.OpError, ValueError) as error:
      message = str(error).strip().splitlines()[0]
      raise ValueError(f"cannot read the checkpoint {path}: {message}"
                       ) from None
    self._keys: Dict[str, str] = {}
    self.shapes: Dict[str, Tuple[int, ...]] = {}
    for key, shape in self._reader.get_variable_to_shape_map().items():
      if ".OPTIMIZER_SLOT" in key or key == "_CHECKPOINTABLE_OBJECT_GRAPH":
        continue
      name = key[:-len(_VALUE_SUFFIX)] if key.endswith(_VALUE_SUFFIX) else key
      if "/.ATTRIBUTES/" in name:
        continue
      self._keys[name] = key
      self.shapes[name] = tuple(shape)

  def read(self, name: str) -> np.ndarray:
    return np.asarray(self._reader.get_tensor(self._keys[name]))


class _H5:

  def __init__(self, path: str):
    import h5py  # pylint: disable=g-import-not-at-top
    try:
      self._file = h5py.File(path, "r")
    except OSError as error:
      raise ValueError(f"cannot read {path}: {error}") from None
    self._datasets: Dict[str, str] = {}
    self.shapes: Dict[str, Tuple[int, ...]] = {}

    def visit(key, item):
      if isinstance(item, h5py.Dataset) and "/vars/" in f"/{key}":
        group, index = key.rsplit("/vars/", 1)
        layer = self._file[f"{group}/vars"].attrs.get("name", group)
        name = f"{layer}/{index}"
        self._datasets[name] = key
        self.shapes[name] = tuple(item.shape)

    self._file.visititems(visit)

  def read(self, name: str) -> np.ndarray:
    return np.asarray(self._file[self._datasets[name]])
