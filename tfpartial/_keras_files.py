"""Keras 3 weight files, read as data: `.weights.h5` and `.keras` archives.

Keras writes a model's variables into HDF5 along the tree of objects that
hold them: `GROUP/vars/0`, `GROUP/vars/1`, ... for each layer or model, in
the order the layer created them, with the layer's name as the `name`
attribute of `GROUP/vars` (a model's own variables are the root's `vars`).
The variables' own names are not written. A spec names a Keras variable by
its `path`: the names of the layers in scope when it was created, then its
own name (`sequential/dense/kernel`, `outer/inner/head/kernel`,
`scaled/scale`). `find` matches such a name against the file:

* the last part names the variable: by its own name where the layer's
  variable names are known (below), by position (`dense/0`, the older
  `LAYER/INDEX` names), or else as the one variable of that layer with the
  spec's shape (or the layer's only variable);
* the part before it is the layer's name;
* the parts before that name, in order, layers or models holding that layer
  (a subsequence of its enclosing layers' names).

Exactly one variable of the file must match, or the name is an error that
lists the candidates by their keys in the file; a key itself
(`layers/dense/vars/0`) always names one variable. Variable names are known
for the common built-in layers (`_NAMES`) where the `.keras` archive's
`config.json` gives the layer's class, or else where the key Keras gives a
layer in a list (`layers/batch_normalization_1`) or a name Keras made up
for it says the class, and the variables are as many and shaped as that
class's are. Nothing is imported or instantiated from the files:
`config.json` is only read.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import struct
import zipfile
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from tfpartial import _checkpoints
from tfpartial._checkpoints import Stored

_CONFIG_LIMIT = 64 * 2**20  # Bytes of config.json; a model's is kilobytes.


@dataclasses.dataclass
class _Owner:
  """A layer, model or other object with variables in the file."""

  key: str  # Its group in the file, "" for the root.
  chain: Tuple[Optional[str], ...]  # Names from the root's down to its own.
  stored: List[Stored]  # Its variables, in the order Keras wrote them.
  in_list: bool  # Held in a list: its key is its class's snake_case name.
  config: Optional[Dict[str, Any]] = None  # From config.json, if known.
  names: Optional[List[str]] = None  # Its variables' names, if known.

  @property
  def name(self) -> Optional[str]:
    return self.chain[-1]


class WeightsFile:
  """A Keras 3 `.weights.h5` file (or the one inside a `.keras` archive)."""

  def __init__(self, path: str, opened: Any = None,
               config: Optional[Dict[str, Any]] = None):
    import h5py  # pylint: disable=g-import-not-at-top
    self.path = path
    try:
      if opened is None:
        if not os.path.exists(path):
          raise ValueError(f"cannot read {path}: no such file")
        opened = path
      self._file = h5py.File(opened, "r")
      owners = self._owners(h5py)
    except (OSError, ValueError, KeyError, RuntimeError) as error:
      if str(error).startswith("cannot read"):
        raise
      reason = _checkpoints.first_line(error)
      if "signature" in reason:
        reason = "not an HDF5 file"
      raise ValueError(f"cannot read {path}: {reason}") from None
    if not any(owner.stored for owner in owners):
      raise ValueError(
          f"{path} holds no Keras weights (no GROUP/vars/N datasets); "
          "verify reads the .weights.h5 and .keras files of Keras 3")
    if config is not None:
      _attach_config(owners, config)
    for owner in owners:
      owner.names = _variable_names(owner)
    self._owners_list = owners
    self._by_key = {stored.key: stored for owner in owners
                    for stored in owner.stored}

  def _owners(self, h5py) -> List[_Owner]:
    groups: Dict[str, Any] = {}

    def visit(key, item):
      if isinstance(item, h5py.Group) and (key == "vars" or
                                           key.endswith("/vars")):
        groups[key[:-len("vars")].rstrip("/")] = item

    self._file.visititems(visit)
    owners = []
    for key in sorted(groups):
      if key == "optimizer" or key.startswith("optimizer/"):
        continue  # The optimizer's state, not the model's variables.
      chain = tuple(_name_of(groups[k]) for k in _ancestors(key) if k in groups)
      stored = [Stored(f"{key}/vars/{name}".lstrip("/"), tuple(item.shape),
                       _dtype_name(item))
                for name, item in sorted(groups[key].items(),
                                         key=lambda pair: _position(pair[0]))
                if isinstance(item, h5py.Dataset)]
      parent = key.rsplit("/", 1)[0] if "/" in key else None
      owners.append(_Owner(key, chain + (_name_of(groups[key]),), stored,
                           in_list=parent is not None and parent not in groups))
    return owners

  def find(self, name: str, shape: Optional[Tuple[int, ...]] = None
           ) -> Stored:
    """The variable the spec calls `name` (see the module docstring)."""
    if name in self._by_key:
      return self._by_key[name]
    parts = name.split("/")
    found: List[Tuple[_Owner, Stored]] = []
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

  def _names(self) -> List[str]:
    names = []
    for owner in self._owners_list:
      path = "/".join(part for part in owner.chain if part)
      for position, stored in enumerate(owner.stored):
        leaf = owner.names[position] if owner.names else str(position)
        names.append(f"{path}/{leaf}" if path else stored.key)
    return names

  def read(self, stored: Stored) -> np.ndarray:
    """One variable's value, as the dtype Keras wrote."""
    try:
      dataset = self._file[stored.key]
      value = np.asarray(dataset[()])
    except (OSError, ValueError, KeyError, RuntimeError) as error:
      raise ValueError(f"cannot read '{stored.key}' from {self.path}: "
                       f"{_checkpoints.first_line(error)}") from None
    if value.dtype.kind == "V" and stored.dtype != "opaque":
      value = value.view(tf.as_dtype(stored.dtype).as_numpy_dtype)
    return value

  def close(self) -> None:
    self._file.close()


class Archive(WeightsFile):
  """A `.keras` archive: its `model.weights.h5`, named with `config.json`.

  The archive is opened as a zip file and its members read as data; the
  weights are read in place (Keras stores them uncompressed).
  """

  def __init__(self, path: str):
    try:
      self._zip = zipfile.ZipFile(path)
    except FileNotFoundError:
      raise ValueError(f"cannot read {path}: no such file") from None
    except (zipfile.BadZipFile, OSError) as error:
      raise ValueError(f"cannot read {path}: not a .keras archive "
                       f"({_checkpoints.first_line(error)})") from None
    try:
      member = self._zip.getinfo("model.weights.h5")
    except KeyError:
      self._zip.close()
      raise ValueError(
          f"{path} holds no model.weights.h5 (a .keras archive of Keras 3 "
          "holds its weights there; sharded archives are not read)"
      ) from None
    if member.compress_type != zipfile.ZIP_STORED:
      self._zip.close()
      raise ValueError(
          f"{path} holds model.weights.h5 compressed; Keras writes it "
          "uncompressed: unzip the archive and verify model.weights.h5")
    config = _read_config(self._zip, path)
    self._raw = open(path, "rb")  # pylint: disable=consider-using-with
    window = _Window(self._raw, _data_offset(self._raw, member),
                     member.file_size)
    super().__init__(path, opened=window, config=config)

  def close(self) -> None:
    super().close()
    self._raw.close()
    self._zip.close()


def _read_config(archive: zipfile.ZipFile, path: str
                 ) -> Optional[Dict[str, Any]]:
  try:
    member = archive.getinfo("config.json")
  except KeyError:
    return None
  if member.file_size > _CONFIG_LIMIT:
    raise ValueError(f"{path}: config.json is {member.file_size} bytes; "
                     f"verify reads at most {_CONFIG_LIMIT}")
  try:
    with archive.open(member) as file:
      config = json.loads(file.read(_CONFIG_LIMIT + 1))
  except (ValueError, RecursionError, OSError, zipfile.BadZipFile) as error:
    raise ValueError(f"{path}: config.json is not a model's config "
                     f"({_checkpoints.first_line(error)})") from None
  return config if isinstance(config, dict) else None


def _data_offset(raw, member: zipfile.ZipInfo) -> int:
  """Where a stored member's bytes start in the zip file."""
  raw.seek(member.header_offset)
  header = raw.read(30)
  if len(header) != 30 or header[:4] != b"PK\x03\x04":
    raise ValueError("model.weights.h5 has a damaged zip header")
  name_length, extra_length = struct.unpack("<HH", header[26:30])
  return member.header_offset + 30 + name_length + extra_length


class _Window(io.RawIOBase):
  """The bytes [start, start + size) of a file, as a file h5py can read."""

  def __init__(self, raw, start: int, size: int):
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

  def readinto(self, buffer) -> int:
    wanted = min(len(buffer), max(0, self._size - self._position))
    self._raw.seek(self._start + self._position)
    count = self._raw.readinto(memoryview(buffer)[:wanted])
    self._position += count
    return count


def _ancestors(key: str) -> List[str]:
  """The group keys above `key`, from the root ("") down."""
  if not key:
    return []
  parts = key.split("/")
  return [""] + ["/".join(parts[:i]) for i in range(1, len(parts))]


def _name_of(group) -> Optional[str]:
  name = group.attrs.get("name")
  if isinstance(name, bytes):
    name = name.decode("utf-8", "replace")
  return name if isinstance(name, str) and name else None


def _position(name: str) -> Tuple[int, Any]:
  return (0, int(name)) if name.isdigit() else (1, name)


def _dtype_name(dataset) -> str:
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
  return dataset.dtype.name


def _holds(owner: _Owner, path: Sequence[str]) -> bool:
  """Whether `owner` is the layer `path[-1]`, held by `path[:-1]` in order."""
  if owner.name != path[-1]:
    return False
  enclosing = iter(owner.chain[:-1])
  return all(any(part == name for name in enclosing) for part in path[:-1])


def _by_leaf(owner: _Owner, leaf: str, shape: Optional[Tuple[int, ...]],
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


def _describe(owner: _Owner) -> str:
  names = [name or "?" for name in owner.chain]
  return f"layer '{names[-1]}'" + (
      f" of {' / '.join(repr(n) for n in names[:-1])}" if len(names) > 1
      else "")


# What the built-in layers most models are made of call their variables, in
# the order Keras writes them: class -> (config or None, shapes) -> names, or
# None where the layer's options or its variables' shapes do not fit.
_Names = Callable[[Optional[Dict[str, Any]], List[Tuple[int, ...]]],
                  Optional[List[str]]]


def _option(config: Optional[Dict[str, Any]], key: str) -> bool:
  return config is None or config.get(key, True) not in (False, None)


def _kernel_and_bias(bias_key: str) -> _Names:
  """Dense, EinsumDense, Conv*: `kernel` (rank >= 2), then `bias`."""

  def names(config, shapes):
    if config is not None and config.get("lora_rank"):
      return None  # Keras writes the kernel with its LoRA factors merged.
    if config is None:
      expected = len(shapes) if len(shapes) in (1, 2) else 0
    else:
      expected = 2 if _option(config, bias_key) else 1
    if len(shapes) != expected or len(shapes[0]) < 2 or (
        expected == 2 and len(shapes[1]) < 1):
      return None
    return ["kernel", "bias"][:expected]

  return names


def _recurrent_cell(config, shapes):
  """LSTMCell, GRUCell, SimpleRNNCell: kernel, recurrent_kernel, bias."""
  expected = 3 if _option(config, "use_bias") else 2
  if config is None and len(shapes) in (2, 3):
    expected = len(shapes)
  if len(shapes) != expected or len(shapes[0]) != 2 or len(shapes[1]) != 2:
    return None
  return ["kernel", "recurrent_kernel", "bias"][:expected]


def _embedding(config, shapes):
  if (config is not None and config.get("lora_rank")) or len(shapes) != 1:
    return None
  return ["embeddings"] if len(shapes[0]) == 2 else None


def _normalization(optional: Sequence[Tuple[str, str]],
                   always: Sequence[str], unknown: str = "") -> _Names:
  """gamma and beta as `scale` and `center` say, then `always`; all of one
  shape."""

  def names(config, shapes):
    if len(set(shapes)) > 1 or (config is not None and unknown
                                and config.get(unknown)):
      return None
    if config is not None:
      chosen = [name for key, name in optional if _option(config, key)]
    elif len(shapes) == len(optional) + len(always):
      chosen = [name for _, name in optional]
    else:
      chosen = []
    chosen += list(always)
    return chosen if len(chosen) == len(shapes) else None

  return names


_NAMES: Dict[str, _Names] = {
    "Dense": _kernel_and_bias("use_bias"),
    "EinsumDense": _kernel_and_bias("bias_axes"),
    "Embedding": _embedding,
    "BatchNormalization": _normalization(
        [("scale", "gamma"), ("center", "beta")],
        ["moving_mean", "moving_variance"], unknown="renorm"),
    "LayerNormalization": _normalization(
        [("scale", "gamma"), ("center", "beta")], [], unknown="rms_scaling"),
    "GroupNormalization": _normalization(
        [("scale", "gamma"), ("center", "beta")], []),
    "LSTMCell": _recurrent_cell,
    "GRUCell": _recurrent_cell,
    "SimpleRNNCell": _recurrent_cell,
}
_NAMES.update({f"Conv{kind}": _kernel_and_bias("use_bias")
               for kind in ("1D", "2D", "3D", "1DTranspose", "2DTranspose",
                            "3DTranspose")})


def _snake_case(class_name: str) -> str:
  """The key Keras gives a layer of this class in a list (as Keras does)."""
  name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", class_name)
  return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


_SNAKE = {_snake_case(name): name for name in _NAMES}


def _variable_names(owner: _Owner) -> Optional[List[str]]:
  """The names of `owner`'s variables, in order, where they are certain.

  The layer's class comes from config.json; failing that, from the key
  Keras gives a layer in a list, or from the layer's name where Keras made
  it up (`layer_normalization_1`): both are the class's snake_case name.
  """
  keys = [stored.key.rsplit("/", 1)[-1] for stored in owner.stored]
  if keys and not any(key.isdigit() for key in keys):
    return keys  # Written under their own names by a custom layer.
  layer_config = None
  if owner.config is not None:
    if not _is_built_in(owner.config):
      return None
    class_name = owner.config.get("class_name")
    layer_config = owner.config.get("config")
    layer_config = layer_config if isinstance(layer_config, dict) else {}
  else:
    hints = [owner.key.rsplit("/", 1)[-1]] if owner.in_list else []
    hints += [owner.name] if owner.name else []
    class_name = next((_SNAKE[snake] for snake in (
        re.sub(r"_\d+$", "", hint) for hint in hints) if snake in _SNAKE),
                      None)
  if class_name not in _NAMES:
    return None
  return _NAMES[class_name](layer_config, [s.shape for s in owner.stored])


def _is_built_in(config: Dict[str, Any]) -> bool:
  module = config.get("module")
  return (isinstance(module, str) and module.split(".")[0] == "keras"
          and not config.get("registered_name"))


def _attach_config(owners: List[_Owner], config: Dict[str, Any]) -> None:
  """Gives each layer of a Sequential or functional model its config entry.

  A model's layers are the list `KEY/layers/...` in the file and
  `config.layers` in config.json; they are matched by their names, which
  Keras keeps unique within a model.
  """
  by_key = {owner.key: owner for owner in owners}
  pending = [("", config)]
  while pending:
    key, model_config = pending.pop()
    if key in by_key:
      by_key[key].config = model_config
    inner = model_config.get("config")
    layers = inner.get("layers") if isinstance(inner, dict) else None
    if not isinstance(layers, list):
      continue
    prefix = f"{key}/layers/" if key else "layers/"
    children = {owner.name: owner for owner in owners
                if owner.key.startswith(prefix)
                and "/" not in owner.key[len(prefix):]}
    for layer in layers:
      layer_inner = layer.get("config") if isinstance(layer, dict) else None
      name = layer_inner.get("name") if isinstance(layer_inner, dict) else None
      if isinstance(name, str) and name in children:
        pending.append((children[name].key, layer))
