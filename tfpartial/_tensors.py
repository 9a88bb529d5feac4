"""The tensors a step reads a selection through, made once per graph.

Can run inside `tf.function`: a constant is made under `tf.init_scope()`,
so a function captures one eager tensor instead of embedding a constant per
trace, eager steps do not convert it again at every step, and a TF1 graph
holds one constant however many ops read it.
"""

from __future__ import annotations

import weakref

import numpy as np
import tensorflow as tf

from tfpartial._selection import Dynamic, Elements, Rows

# selection -> {kind: eager tensor}.
_EAGER: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# graph -> {(id(selection), kind): tensor name}. Names, not tensors: a
# tensor would keep its graph alive through the weak key.
_GRAPH: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def frozen_mask_tensor(selection) -> tf.Tensor:
  """A bool tensor, True where frozen, that broadcasts to the variable.

  Of the variable's shape for an element mask; one bool per row, shaped
  [rows, 1, ...], for a row selection.
  """
  if isinstance(selection, Dynamic):
    return _dynamic(selection)
  return _cached(selection, "frozen_mask", lambda: _values(selection))


def rows_tensor(selection: Rows) -> tf.Tensor:
  """The row numbers of a row selection, as an int64 tensor."""
  return _cached(selection, "rows", lambda: selection.rows)


def _cached(selection, kind: str, values) -> tf.Tensor:
  """`tf.constant(values())`, made once per selection, kind and graph."""
  with tf.init_scope():
    if tf.executing_eagerly():
      per_kind = _EAGER.setdefault(selection, {})
      if kind not in per_kind:
        per_kind[kind] = tf.constant(values())
      return per_kind[kind]
    graph = tf.compat.v1.get_default_graph()
    names = _GRAPH.setdefault(graph, {})
    key = (id(selection), kind)
    if key in names:
      return graph.get_tensor_by_name(names[key])
    tensor = tf.constant(values(), name=f"tfpartial_{kind}")
    names[key] = tensor.name
    weakref.finalize(selection, names.pop, key, None)
    return tensor


def _values(selection) -> np.ndarray:
  if isinstance(selection, Rows):
    vector = selection.frozen_row_vector()
    return vector.reshape((-1,) + (1,) * (len(selection.shape) - 1))
  return selection.mask


def _dynamic(selection: Dynamic) -> tf.Tensor:
  # Read where the step runs, not under init_scope: a tf.function or a TF1
  # graph then reads the mask variable's value at every step.
  frozen = None
  if selection.static is not None:
    frozen = tf.constant(selection.static)
  for variable, trains in selection.masks:
    value = tf.convert_to_tensor(variable)
    value = tf.logical_not(value) if trains else value
    frozen = value if frozen is None else tf.logical_or(frozen, value)
  return frozen
