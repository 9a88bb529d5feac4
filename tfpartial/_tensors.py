"""The tensors a step reads a selection through, made once per graph.

Can run inside `tf.function`: the mask is made under `tf.init_scope()`, so
a function captures one eager tensor instead of embedding a constant per
trace, and a TF1 graph holds one constant however many ops read it.
"""

from __future__ import annotations

import weakref

import tensorflow as tf

import numpy as np

from tfpartial._selection import Dynamic, Elements, Rows

# selection -> eager mask tensor.
_EAGER_MASKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# graph -> {id(selection): tensor name}. Names, not tensors: a tensor would
# keep its graph alive through the weak key.
_GRAPH_MASKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def frozen_mask_tensor(selection) -> tf.Tensor:
  """A bool tensor, True where frozen, that broadcasts to the variable.

  Of the variable's shape for an element mask; one bool per row, shaped
  [rows, 1, ...], for a row selection.
  """
  if isinstance(selection, Dynamic):
    return _dynamic(selection)
  with tf.init_scope():
    if tf.executing_eagerly():
      tensor = _EAGER_MASKS.get(selection)
      if tensor is None:
        tensor = _EAGER_MASKS[selection] = tf.constant(_values(selection))
      return tensor
    graph = tf.compat.v1.get_default_graph()
    names = _GRAPH_MASKS.setdefault(graph, {})
    name = names.get(id(selection))
    if name is not None:
      return graph.get_tensor_by_name(name)
    tensor = tf.constant(_values(selection), name="tfpartial_frozen_mask")
    names[id(selection)] = tensor.name
    weakref.finalize(selection, names.pop, id(selection), None)
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
