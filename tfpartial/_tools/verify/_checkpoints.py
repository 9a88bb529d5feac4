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
from typing import (Dict, Hashable, Iterable, List, Optional, Protocol, Set,
                    Tuple)

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _files
from tfpartial._frozen import _tfprivate

_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


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
  path: str  # As resolved: a folder's latest checkpoint, say.
  file: str  # The file that identifies it: the same file, the same one.

  @property
  def saved_format(self) -> Optional[str]:
    """The format whose places in a spec's "saved" it reads (`at`)."""

  def find(self, name: str, shape: Optional[Tuple[int, ...]] = None
           ) -> Stored:
    """Where the variable the spec calls `name` is; ValueError if nowhere
    or not one."""

  def read(self, stored: Stored) -> np.ndarray:
    """One variable's value; ValueError if it cannot be read."""

  def names(self) -> List[str]:
    """The names a spec may give its variables, which a pattern in the
    spec is matched against."""

  def unnamed(self) -> List[str]:
    """Those of `names` that are not the variables' own (`LAYER/0`: the
    file does not tell)."""

  def at(self, location: str) -> List[Tuple[Hashable, Stored]]:
    """(where the model is, the variable) for the variables at `location`,
    a spec's "saved" place for `saved_format`, relative to the model the
    spec was written from (which a file may hold anywhere)."""

  def holds(self, stored: Stored, name: str) -> bool:
    """False where the file says `stored` is not the variable `name`."""

  def layer_of(self, stored: Stored) -> Optional[str]:
    """The layer the file says holds `stored`, if it says."""

  def is_root(self, anchor: Hashable) -> bool:
    """Whether `at`'s `anchor` is the model the file was saved from (not
    one the file holds inside another)."""

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
      path = _latest(path)
    self.path = path
    self.file = path + ".index"  # The file that identifies it.
    self._data_bytes = _check_files(path)
    try:
      self._reader = tf.train.load_checkpoint(path)
      shapes = self._reader.get_variable_to_shape_map()
      dtypes = self._reader.get_variable_to_dtype_map()
    except (tf.errors.OpError, ValueError, OSError) as error:
      raise ValueError(f"cannot read the checkpoint {path}: "
                       f"{first_line(error)}") from None
    self._stored: Dict[str, Stored] = {}
    self.saved_format = "checkpoint" if _OBJECT_GRAPH in shapes else None
    self._graph: Optional[_Graph] = None
    for key, shape in shapes.items():
      if ".OPTIMIZER_SLOT" in key or key == _OBJECT_GRAPH:
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

  def names(self) -> List[str]:
    return sorted(self._stored)

  def unnamed(self) -> List[str]:
    return []

  def at(self, location: str) -> List[Tuple[Hashable, Stored]]:
    """(the object the path starts at, the variable) for the variables a
    path in the object graph to which ends in `location` (any of their
    paths: a Keras model's variable is also its optimizer's)."""
    if self._graph is None:
      try:
        serialized = self._reader.get_tensor(_OBJECT_GRAPH)
        self._graph = _Graph(_tfprivate.object_graph(serialized))
      except (tf.errors.OpError, ValueError) as error:
        raise ValueError(f"cannot read the object graph of {self.path}: "
                         f"{first_line(error)}") from None
    return sorted((node, self._stored[name]) for node, name in
                  self._graph.ending_in(location.split("/"))
                  if name in self._stored)

  def holds(self, stored: Stored, name: str) -> bool:
    del stored, name  # An object graph names no layers.
    return True

  def layer_of(self, stored: Stored) -> Optional[str]:
    del stored  # An object graph names no layers.
    return None

  def is_root(self, anchor: Hashable) -> bool:
    """The checkpoint's root object, or one of its own (`model` of
    `tf.train.Checkpoint(model=...)`)."""
    return self._graph is not None and self._graph.is_root(anchor)

  def read(self, stored: Stored) -> np.ndarray:
    """One variable's value; ValueError if the files are missing or damaged."""
    if stored.dtype != "string" and self._data_bytes is not None:
      size = int(np.prod(stored.shape, dtype=np.float64)) * (
          tf.as_dtype(stored.dtype).size)
      if size > self._data_bytes:  # No more than is stored is read.
        raise ValueError(
            f"cannot read '{stored.key.replace(_VALUE_SUFFIX, '')}' from "
            f"{self.path}: its shape "
            f"{stored.shape} needs {size} bytes, more than its data files "
            f"hold ({self._data_bytes})")
    try:
      return np.asarray(self._reader.get_tensor(stored.key))
    except (tf.errors.OpError, IndexError, ValueError, OSError) as error:
      name = stored.key.replace(_VALUE_SUFFIX, "")
      raise ValueError(f"cannot read '{name}' from {self.path}: "
                       f"{first_line(error)}") from None

  def close(self) -> None:
    pass


class _Graph:
  """A checkpoint's object graph, walked backwards: which values a path of
  object names ends at."""

  def __init__(self, graph: object):
    nodes = list(getattr(graph, "nodes"))
    self._parents: Dict[int, List[Tuple[int, str]]] = {}
    self._edges: Dict[str, List[Tuple[int, int]]] = {}
    self._values: Dict[int, str] = {}
    for parent, node in enumerate(nodes):
      for child in node.children:
        if 0 <= child.node_id < len(nodes):  # An untrusted file's ids.
          self._parents.setdefault(child.node_id, []).append(
              (parent, child.local_name))
          self._edges.setdefault(child.local_name, []).append(
              (parent, child.node_id))
      for attribute in node.attributes:
        if attribute.name == "VARIABLE_VALUE":
          key = attribute.checkpoint_key
          self._values[parent] = (key[:-len(_VALUE_SUFFIX)]
                                  if key.endswith(_VALUE_SUFFIX) else key)

  def is_root(self, node: Hashable) -> bool:
    return node == 0 or any(parent == 0 for parent, _ in self._parents.get(
        node if isinstance(node, int) else -1, []))

  def ending_in(self, names: List[str]) -> Set[Tuple[int, str]]:
    """(node, value) for the values (their names, as the reader keys them)
    some path to which from the node is `names`: one step back per name,
    from the last."""
    *before, last = names
    reached = {(child, parent) for parent, child in self._edges.get(last, [])
               if child in self._values}
    for name in reversed(before):
      reached = {(value, parent) for value, node in reached
                 for parent, edge in self._parents.get(node, [])
                 if edge == name}
    return {(node, self._values[value]) for value, node in reached}


def _latest(folder: str) -> str:
  """The prefix a folder's `checkpoint` file names, checked as a file."""
  _files.check_folder(folder)
  _files.check_regular(os.path.join(folder, "checkpoint"), missing_ok=True)
  latest: Optional[str] = tf.train.latest_checkpoint(folder)
  if latest is None:
    raise ValueError(f"no checkpoint in the folder {folder}")
  return latest


def _check_files(prefix: str) -> Optional[int]:
  """The bytes of `prefix`'s data files (None if it has none: a TF1 V1
  checkpoint is one file), each checked to be a regular file (a FIFO
  would hang TensorFlow), and its index likewise."""
  folder, base = os.path.split(prefix)
  names = _files.check_folder(folder or ".", missing_ok=True)
  for name in (base + ".index", base):
    if name in names:
      _files.check_regular(os.path.join(folder, name))
  sizes = []
  for name in names:
    if name.startswith(base + ".data-"):
      data = os.path.join(folder, name)
      _files.check_regular(data)
      sizes.append(os.stat(data).st_size)
  return sum(sizes) if sizes else None


def listing(names: Iterable[str], limit: int = 12) -> str:
  """`a, b, c, ... (40 in all)`: what a checkpoint holds, for an error."""
  ordered = sorted(names)
  shown = ", ".join(ordered[:limit])
  return shown + ("" if len(ordered) <= limit
                  else f", ... ({len(ordered)} in all)")
