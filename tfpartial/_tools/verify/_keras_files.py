"""Keras HDF5 weight files, read as data.

Keras 3 (`.weights.h5`, and the `model.weights.h5` of a `.keras` archive)
writes a model's variables along the tree of objects that hold them:
`GROUP/vars/0`, `GROUP/vars/1`, ... for each layer or model, in the order
the layer created them, with the layer's name as the `name` attribute of
`GROUP/vars` (a model's own variables are the root's `vars`); the
variables' own names are not written. A spec names a Keras variable by its
`path`: the names of the layers in scope when it was created, then its own
name (`sequential/dense/kernel`, `outer/inner/head/kernel`,
`scaled/scale`). `WeightsFile.find` matches such a name against the file:

* the last part names the variable: by its own name where the layer's
  variable names are known (`_keras_names`), by position (`dense/0`, the
  older `LAYER/INDEX` names), or else as the one variable of that layer
  with the spec's shape (or the layer's only variable);
* the part before it is the layer's name;
* the parts before that name, in order, layers or models holding that layer
  (a subsequence of its enclosing layers' names). A name of one part (a
  variable made outside any layer) may be any layer's.

Exactly one variable of the file must match, or the name is an error that
lists the candidates by their keys in the file; a key itself
(`layers/dense/vars/0`) always names one variable.

The older HDF5 format (`save_weights("w.h5")` in Keras 2, `model.save`
to `.h5`) lists each layer's variable names, so `LegacyWeightsFile` finds
them as a TF checkpoint's are."""

from __future__ import annotations

import io
import os
from types import ModuleType
from typing import (TYPE_CHECKING, Dict, Hashable, List, Optional, Sequence,
                    Tuple, Union, cast)

import numpy as np
import tensorflow as tf

from tfpartial._tools.verify import _checkpoints
from tfpartial._tools.verify import _h5
from tfpartial._tools.verify import _keras_legacy
from tfpartial._tools.verify import _keras_names
from tfpartial._tools.verify import _keras_tree
from tfpartial._tools.verify._checkpoints import Stored
from tfpartial._tools.verify._keras_names import Config
from tfpartial._tools.verify._keras_names import Owner

if TYPE_CHECKING:  # Imported where a file is opened; untyped (mypy.ini).
  from h5py import Dataset, File, Group


def open_h5(path: str, opened: Optional[_h5.Opened] = None,
            size: Optional[int] = None, config: Optional[Config] = None
            ) -> Union[WeightsFile, _keras_legacy.LegacyWeightsFile]:
  """The reader for a Keras HDF5 file: at `path`, or `opened` (a file
  object of `size` bytes) with `path` only naming it; `config` is the
  model's config.json."""
  import h5py  # pylint: disable=g-import-not-at-top
  file, opened, size = _h5.open_file(path, opened, size)
  try:
    if _keras_legacy.layer_names(file) is not None:
      return _keras_legacy.LegacyWeightsFile(path, file, opened, size)
    return WeightsFile(path, (file, opened, size), config, h5py)
  except (OSError, KeyError, RuntimeError, TypeError) as error:
    file.close()
    opened.close()
    raise ValueError(f"cannot read {path}: "
                     f"{_checkpoints.first_line(error)}") from None
  except ValueError as error:
    file.close()
    opened.close()
    if path in str(error):
      raise
    raise ValueError(f"cannot read {path}: "
                     f"{_checkpoints.first_line(error)}") from None


class WeightsFile(_h5.Reader):
  """A Keras 3 `.weights.h5` file (or the one inside a `.keras` archive)."""

  layout = "keras"  # Keys are where Keras 3 loads each variable from.
  saved_format: Optional[str] = "h5"  # A spec's "saved" key: `at`.

  def __init__(self, path: str, opened: Tuple[File, _h5.Opened, int],
               config: Optional[Config], h5py: ModuleType):
    super().__init__(path, *opened)
    owners = self._owners(h5py, config)
    if not any(owner.stored for owner in owners):
      raise ValueError(
          f"{path} holds no Keras weights (no GROUP/vars/N datasets); "
          "verify reads the .weights.h5 and .keras files of Keras 3 and "
          "Keras HDF5 files listing their weights' names")
    for owner in owners:
      owner.names = _keras_names.variable_names(owner)
    self._owners_list = owners
    self._by_key = {stored.key: stored for owner in owners
                    for stored in owner.stored}
    self._owner_of = {stored.key: owner for owner in owners
                      for stored in owner.stored}
    self._by_suffix: Dict[int, Dict[str, List[Stored]]] = {}

  def _owners(self, h5py: ModuleType, config: Optional[Config]
              ) -> List[Owner]:
    """Each group with variables, named as config.json (if any) says."""
    groups: Dict[str, Group] = {}

    def visit(key: str, item: Union[Group, Dataset]) -> None:
      if isinstance(item, h5py.Group) and (key == "vars" or
                                           key.endswith("/vars")):
        groups[key[:-len("vars")].rstrip("/")] = item

    self._file.visititems(visit)
    names = {key: _name_of(group) for key, group in groups.items()
             if key != "optimizer" and not key.startswith("optimizer/")}
    placed = {} if config is None else _keras_tree.layer_names(config)
    _keras_tree.check_names(self.path, names, placed)
    for key in names:
      given = placed.get(_keras_tree.place(key))
      names[key] = names[key] or (given[0] if given else None)
    owners = []
    for key in sorted(names):  # The optimizer's state is left out.
      chain = tuple(names[k] for k in _ancestors(key) if k in names)
      stored = [Stored(f"{key}/vars/{name}".lstrip("/"), tuple(item.shape),
                       _h5.dtype_name(item))
                for name, item in sorted(groups[key].items(),
                                         key=lambda pair: _position(pair[0]))
                if isinstance(item, h5py.Dataset)]
      parent = key.rsplit("/", 1)[0] if "/" in key else None
      owners.append(Owner(key, chain + (names[key],), stored,
                          in_list=parent is not None and parent not in groups))
    _keras_tree.attach(owners, placed)
    return owners

  def find(self, name: str, shape: Optional[Tuple[int, ...]] = None
           ) -> Stored:
    """The variable the spec calls `name` (see the module docstring)."""
    if name in self._by_key:
      return self._by_key[name]
    parts = name.split("/")
    found: List[Tuple[Owner, Stored]] = []
    for owner in self._owners_list:
      if len(parts) > 1 and not _holds(owner, parts[:-1]):
        continue
      found.extend((owner, stored) for stored in _by_leaf(
          owner, parts[-1], shape, whole_name=len(parts) > 1))
    if len(found) == 1:
      return found[0][1]
    if found:
      raise ValueError(
          f"'{name}' could be any of {len(found)} variables in {self.path}: "
          + "; ".join(f"{stored.key} {stored.shape} in "
                      f"{_describe(owner)}" for owner, stored in found[:8])
          + ". Name one by a longer path (the layers or models that hold "
          "it), as LAYER/POSITION, or by its key in the file")
    raise ValueError(f"'{name}' is not a variable of {self.path} (it has "
                     f"{_checkpoints.listing(self._names())})")

  def names(self) -> List[str]:
    """The variables' paths, as `spec.to_json()` names them."""
    return self._names()

  def unnamed(self) -> List[str]:
    """The names (`LAYER/POSITION`) of the variables whose own names the
    file does not tell: a layer of a class it does not record."""
    return [name for name, owner in zip(self._names(), (
        owner for owner in self._owners_list for _ in owner.stored))
            if owner.names is None]

  def at(self, key: str) -> List[Tuple[Hashable, Stored]]:
    """(where the model is, the variable) for the variables at `key` (as
    the spec's "saved" gives it, relative to the model it was written
    from: `""`) or at `MODEL/key` (a file of a model that holds that one at
    the key `MODEL`)."""
    count = key.count("/") + 1
    if count not in self._by_suffix:
      index: Dict[str, List[Stored]] = {}
      for stored in self._by_key.values():
        parts = stored.key.split("/")
        if len(parts) > count:
          index.setdefault("/".join(parts[-count:]), []).append(stored)
      self._by_suffix[count] = index
    found: List[Tuple[Hashable, Stored]] = (
        [("", self._by_key[key])] if key in self._by_key else [])
    return found + [(stored.key[:-len(key) - 1], stored)
                    for stored in self._by_suffix[count].get(key, [])]

  def layer_of(self, stored: Stored) -> Optional[str]:
    """The layer name Keras wrote beside `stored`, if any."""
    return self._owner_of[stored.key].name

  def is_root(self, anchor: Hashable) -> bool:
    return anchor == ""  # The key as it is: no model around the spec's.

  def holds(self, stored: Stored, name: str) -> bool:
    """Whether the layer name Keras wrote beside `stored`, if any, is one
    of the layers in `name` (a variable's path; one made outside any layer's
    scope, such as a subclassed model's own in `__init__`, names none)."""
    layer = self._owner_of[stored.key].name
    scopes = name.split("/")[:-1]
    return layer is None or not scopes or layer in scopes

  def _names(self) -> List[str]:
    names = []
    for owner in self._owners_list:
      path = "/".join(part for part in owner.chain if part)
      for position, stored in enumerate(owner.stored):
        leaf = owner.names[position] if owner.names else str(position)
        names.append(f"{path}/{leaf}" if path else stored.key)
    return names

def _ancestors(key: str) -> List[str]:
  """The group keys above `key`, from the root ("") down."""
  if not key:
    return []
  parts = key.split("/")
  return [""] + ["/".join(parts[:i]) for i in range(1, len(parts))]


def _name_of(group: Group) -> Optional[str]:
  name = group.attrs.get("name")
  if isinstance(name, bytes):
    name = name.decode("utf-8", "replace")
  return name if isinstance(name, str) and name else None


def _position(name: str) -> Tuple[int, Union[int, str]]:
  return (0, int(name)) if name.isdigit() else (1, name)


def _holds(owner: Owner, path: Sequence[str]) -> bool:
  """Whether `owner` is the layer `path[-1]`, held by `path[:-1]` in order."""
  if owner.name != path[-1]:
    return False
  enclosing = iter(owner.chain[:-1])
  return all(any(part == name for name in enclosing) for part in path[:-1])


def _by_leaf(owner: Owner, leaf: str, shape: Optional[Tuple[int, ...]],
             whole_name: bool) -> List[Stored]:
  """The variables of `owner` the last part of a spec's name may mean."""
  if leaf.isdigit():
    position = int(leaf)
    return [owner.stored[position]] if (
        whole_name and position < len(owner.stored)) else []
  if owner.names is not None:
    return [stored for name, stored in zip(owner.names, owner.stored)
            if name == leaf]
  if whole_name and len(owner.stored) == 1:
    return list(owner.stored)
  if shape is None:
    return list(owner.stored)  # Any of them: ambiguous unless alone.
  return [stored for stored in owner.stored if stored.shape == tuple(shape)]


def _describe(owner: Owner) -> str:
  names = [name or "?" for name in owner.chain]
  return f"layer '{names[-1]}'" + (
      f" of {' / '.join(repr(n) for n in names[:-1])}" if len(names) > 1
      else "")
