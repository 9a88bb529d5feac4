"""The tensors a step reads a selection through, made once per graph.

Can run inside `tf.function`: a constant is made under `tf.init_scope()`,
so a function captures one eager tensor instead of embedding a constant per
trace, eager steps do not convert it again at every step, and a TF1 graph
holds one constant however many ops read it.

What they cost does not grow with a mask's size beyond one pass over its
bytes: an eager mask tensor shares the memory of the selection's NumPy mask
(DLPack), and a TF1 graph constant takes the mask as bytes, where
`tf.constant` would make one Python call per bool (seconds for 10M).
"""

from __future__ import annotations

import functools
import hashlib
import weakref
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _selection
from tfpartial._frozen._selection import RowSet, Selection

# selection -> {kind: eager tensor}.
_EAGER: "weakref.WeakKeyDictionary[Any, Dict[str, tf.Tensor]]" = (
    weakref.WeakKeyDictionary())
# graph -> {(id(selection), kind) or a small constant's content: tensor
# name}. Names, not tensors: a tensor would keep its graph alive through
# the weak key.
_GRAPH: "weakref.WeakKeyDictionary[Any, Dict[Tuple[Any, ...], str]]" = (
    weakref.WeakKeyDictionary())
# A graph constant of at most this many bytes is shared by every selection
# with the same values (the same mask on each of a deep model's layers):
# each constant is a node a TF1 session runs at every step, a cost per
# node that matters next to a small variable's update (bench row (j)).
# Larger ones are not hashed: their update costs far more than a node.
SHARED_UP_TO = 1 << 20


def frozen_mask_tensor(selection: Selection) -> tf.Tensor:
  """A bool tensor, True where frozen, that broadcasts to the variable.

  Of the variable's shape for an element mask; one bool per row, shaped
  [rows, 1, ...], for a row selection.
  """
  if selection.mask_variables:
    return _dynamic(selection)
  return _cached(selection, "frozen_mask", lambda: _static(selection))


def select(frozen: tf.Tensor, if_frozen: tf.Tensor,
           otherwise: tf.Tensor) -> tf.Tensor:
  """`tf.where(frozen, if_frozen, otherwise)` for a mask from this module.

  The two values have one shape; `frozen` has it too, or is one bool per
  row shaped [rows, 1, ...]. Both forms go to the v1 `Select` kernel (the
  second as a vector over the first axis), which runs faster on CPU than
  the broadcasting `SelectV2` behind `tf.where` (docs/measurements.md,
  "Why a kernel, and other choices"). A step runs two selects per partially frozen
  variable (mask and restore), most of what tfpartial adds to a dense
  step.
  """
  mask_shape, shape = frozen.shape, otherwise.shape
  if mask_shape.rank is not None and mask_shape.rank == shape.rank:
    if mask_shape.rank > 1 and all(d == 1 for d in mask_shape[1:]):
      frozen = tf.reshape(frozen, [-1])
      mask_shape = frozen.shape
    if mask_shape.is_compatible_with(shape[:mask_shape.rank]):
      return tf.compat.v1.where(frozen, if_frozen, otherwise)
  return tf.where(frozen, if_frozen, otherwise)


def packed_mask_tensor(selection: Selection) -> tf.Tensor:
  """The element mask of a `packable` selection, True where frozen, as a
  flat uint8 tensor of one bit per element, eight to a byte from the least
  significant bit: what a compiled kernel takes for a large mask, an
  eighth of its bytes."""
  return _cached(selection, "packed_mask", lambda: np.packbits(
      _static(selection).reshape(-1), bitorder="little"))


def trainable_offsets_tensor(selection: Selection) -> tf.Tensor:
  """The flat offsets of the elements `selection` leaves trainable, rising,
  as an int32 vector (for a variable under 2**31 elements): what a compiled
  kernel takes for a mostly frozen variable. Made once per selection and
  graph, as the masks are."""
  return _cached(selection, "trainable_offsets",
                 lambda: _selection.trainable_offsets(selection))


def rows_tensor(row_set: RowSet) -> tf.Tensor:
  """The row numbers of a row set, as an int64 tensor."""
  return _cached(row_set, "rows", lambda: row_set.rows)


def _cached(selection: object, kind: str,
            values: Callable[[], np.ndarray]) -> tf.Tensor:
  """`tf.constant(values())`, made once per selection, kind and graph."""
  with tf.init_scope():
    if tf.executing_eagerly():
      per_kind = _EAGER.setdefault(selection, {})
      if kind not in per_kind:
        per_kind[kind] = eager_constant(values())
      return per_kind[kind]
    graph = tf.compat.v1.get_default_graph()
    names = _GRAPH.setdefault(graph, {})
    key = (id(selection), kind)
    if key in names:
      return graph.get_tensor_by_name(names[key])
    array = values()
    content = _content(kind, array)
    if content is not None and content in names:
      tensor = graph.get_tensor_by_name(names[content])
    else:
      tensor = graph_constant(array, name=f"tfpartial_{kind}")
      if content is not None:
        names[content] = tensor.name
    names[key] = tensor.name
    weakref.finalize(selection, names.pop, key, None)
    return tensor


def _content(kind: str, array: np.ndarray) -> Optional[Tuple[Any, ...]]:
  """What identifies a small constant by its values, or None."""
  if array.nbytes > SHARED_UP_TO:
    return None
  digest = hashlib.blake2b(array.tobytes(),
                           digest_size=16).digest()
  return ("content", kind, array.dtype.str, array.shape, digest)


def eager_constant(values: np.ndarray) -> tf.Tensor:
  """An eager tensor of `values`, sharing their memory where it can.

  It can for a bool array from `_selection.new_mask` (aligned as TensorFlow
  aligns tensors, in a writable buffer): DLPack hands the buffer over, and
  the tensor keeps the array alive. `tf.constant` would copy it, and
  transiently copy it twice. Nothing writes to the shared buffer: the
  selection's view of it is read-only, and a constant is never an op's
  output buffer while the tensor holds it.
  """
  if values.size and _selection.is_aligned(values) and shares_masks():
    try:
      return _shared(values)
    except (BufferError, ValueError):
      pass  # Not a new_mask buffer: its base is read-only.
  return tf.constant(values)


def _shared(values: np.ndarray) -> tf.Tensor:
  writable = values.view()
  # DLPack exports only writable arrays. This view is never written.
  writable.setflags(write=True)
  return tf.experimental.dlpack.from_dlpack(writable.__dlpack__())


@functools.lru_cache(maxsize=None)
def shares_masks() -> bool:
  """Whether eager mask tensors share the selection's memory here.

  They need NumPy's and TensorFlow's DLPack to pass bool arrays
  (TensorFlow 2.15's rejects them: type code 6): else each is a copy.
  """
  mask = _selection.new_mask((2,))
  mask[0] = True
  try:
    with tf.init_scope():
      tensor = _shared(mask)
      return bool(tensor.dtype == tf.bool and tensor.numpy().tolist() == [
          True, False])
  except (AttributeError, BufferError, TypeError, ValueError,
          tf.errors.OpError):
    return False


def graph_constant(values: np.ndarray, name: str) -> tf.Tensor:
  """`tf.constant(values)` in a TF1 graph, in time independent of the size
  in Python.

  `make_tensor_proto` appends a bool array to its proto one Python call
  per element (seconds for a large mask: docs/measurements.md, "Building a
  TF1 graph"), but copies a uint8 array as bytes: the same
  bytes, relabelled as bool, make the same constant.
  """
  if values.dtype != np.bool_:
    return tf.constant(values, name=name)
  proto = tf.make_tensor_proto(np.ascontiguousarray(values).view(np.uint8))
  proto.dtype = tf.bool.as_datatype_enum
  return tf.constant(proto, name=name)


def _static(selection: Selection) -> np.ndarray:
  mask = selection.broadcast_mask()
  if mask is None:
    raise TypeError(f"no static mask: {selection.describe()}")
  return mask


def _dynamic(selection: Selection) -> tf.Tensor:
  # Read where the step runs, not under init_scope: a tf.function or a TF1
  # graph then reads the mask variable's value at every step.
  frozen = None
  static = selection.broadcast_mask()
  if static is not None:
    frozen = _cached(selection, "static_mask", lambda: static)
  for variable, trains in selection.mask_variables:
    value = tf.convert_to_tensor(variable)
    value = tf.logical_not(value) if trains else value
    frozen = value if frozen is None else tf.logical_or(frozen, value)
  return frozen
