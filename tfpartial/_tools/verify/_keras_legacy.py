"""Keras HDF5 files of the older format, which name each variable.

`save_weights("w.h5")` in Keras 2 and `model.save("m.h5")` (Keras 2 and 3)
list the model's layers in the attribute `layer_names` and each layer's
weights in `weight_names` (in chunks `weight_names0`, `weight_names1`, ...
past HDF5's attribute size), so a variable is found by its name as in a TF
checkpoint.
"""

from __future__ import annotations

from typing import (TYPE_CHECKING, Dict, Hashable, List, Optional, Tuple,
                    Union, cast)

import numpy as np

from tfpartial._tools.verify import _checkpoints
from tfpartial._tools.verify import _h5
from tfpartial._tools.verify._checkpoints import Stored

if TYPE_CHECKING:  # Imported where a file is opened; untyped (mypy.ini).
  from h5py import File, Group


class LegacyWeightsFile(_h5.Reader):
  """A Keras HDF5 file of the older format, which names each variable.

  `save_weights("w.h5")` in Keras 2 and `model.save("m.h5")` write, for
  each layer, the names of its variables (`dense/kernel:0` in Keras 2, the
  `path` in Keras 3); a variable is known by that name without `:0`, or by
  a unique ending of it, as in a TF checkpoint.
  """

  layout = "keras-h5"
  saved_format: Optional[str] = None  # Names its variables: no "saved".

  def __init__(self, path: str, file: File, opened: _h5.Opened, size: int):
    super().__init__(path, file, opened, size)
    root = file["model_weights"] if "model_weights" in file else file
    self._stored: Dict[str, Stored] = {}
    twice = set()
    import h5py  # pylint: disable=g-import-not-at-top
    # Listed: open_h5 makes this reader only for a file that lists them.
    for layer in cast(List[str], layer_names(file)):
      group = root.get(layer)
      if not isinstance(group, h5py.Group):
        raise ValueError(f"layer_names lists the layer '{layer}', which is "
                         "not a group in the file")
      for weight in _attribute_list(group, "weight_names"):
        name = weight[:-2] if weight.endswith(":0") else weight
        twice.update([name] if name in self._stored else [])
        dataset = group.get(weight)
        if not isinstance(dataset, h5py.Dataset):
          raise ValueError(f"the layer '{layer}' lists the weight '{weight}', "
                           "which is not a dataset in it")
        self._stored[name] = Stored(
            dataset.name.lstrip("/"), tuple(dataset.shape),
            _h5.dtype_name(dataset))
    self._twice = twice

  def names(self) -> List[str]:
    return sorted(self._stored)

  def unnamed(self) -> List[str]:
    return []

  def at(self, key: str) -> List[Tuple[Hashable, Stored]]:
    del key  # Never asked: no `saved_format`.
    return []

  def holds(self, stored: Stored, name: str) -> bool:
    del stored, name
    return True

  def layer_of(self, stored: Stored) -> Optional[str]:
    del stored
    return None

  def is_root(self, anchor: Hashable) -> bool:
    del anchor
    return True

  def find(self, name: str, shape: Optional[Tuple[int, ...]] = None
           ) -> Stored:
    del shape  # The file names its variables.
    matches = [name] if name in self._stored else sorted(
        key for key in self._stored if key.endswith("/" + name))
    if len(matches) == 1 and matches[0] not in self._twice:
      return self._stored[matches[0]]
    if matches:
      raise ValueError(
          f"'{name}' could be any of several variables in {self.path} "
          f"({', '.join(matches)}): two layers name their variables alike; "
          "Keras' .weights.h5 format tells them apart")
    raise ValueError(f"'{name}' is not a variable of {self.path} (it has "
                     f"{_checkpoints.listing(self._stored)})")

def layer_names(file: File) -> Optional[List[str]]:
  """The layers an older-format Keras HDF5 file lists, or None."""
  root = file["model_weights"] if "model_weights" in file else file
  if not any(key.startswith("layer_names") for key in root.attrs):
    return None
  return _attribute_list(root, "layer_names")


def _attribute_list(group: Group, name: str) -> List[str]:
  """A list of names Keras wrote as an attribute, maybe in chunks
  (`weight_names0`, `weight_names1`, ...) past HDF5's attribute size."""
  chunks = [name] if name in group.attrs else []
  while name not in group.attrs and f"{name}{len(chunks)}" in group.attrs:
    chunks.append(f"{name}{len(chunks)}")
  values: List[Union[bytes, str]] = []
  for chunk in chunks:
    listed = group.attrs[chunk]
    if not (isinstance(listed, np.ndarray) and listed.ndim == 1 and all(
        isinstance(value, (bytes, str)) for value in listed)):
      raise ValueError(f"the attribute {chunk} of {group.name} is not a list "
                       "of names")
    values.extend(listed)
  return [value.decode("utf-8") if isinstance(value, bytes) else str(value)
          for value in values]
