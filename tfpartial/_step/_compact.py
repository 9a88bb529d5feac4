"""Compact row training: the optimizer sees only the rows that train.

For `train_only(table, rows, compact=True)`. The trainable rows live in a
small variable of their own, made by tfpartial; the optimizer trains it,
so its slots and accumulators cover only those rows: the split-variable
reference, done for the user. Each step copies the rows from the table into
it first (so what the user assigns to the table is what trains) and writes
them back after; the frozen rows are never touched, and nothing the size
of the table is read or written.
"""

from __future__ import annotations

import weakref
from typing import Any, Dict, Optional, Tuple, Union

import tensorflow as tf

from tfpartial._step import _distribute
from tfpartial._step import _restore
from tfpartial._frozen import _tensors
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Rows
from tfpartial._frozen._types import Gradient, Variable

# selection -> {graph or "eager": the compact variable}.
_Owners = Dict[Union[str, tf.Graph], tf.Variable]
_COMPACT: "weakref.WeakKeyDictionary[Rows, _Owners]" = (
    weakref.WeakKeyDictionary())


def compact_variable(table: Variable, selection: Rows) -> tf.Variable:
  """The variable holding `table`'s trainable rows, made once per graph."""
  shape = (selection.rows.size,) + tuple(selection.shape[1:])
  storage = _variables.storage(table)
  with tf.init_scope():
    owner = ("eager" if tf.executing_eagerly()
             else tf.compat.v1.get_default_graph())
    per_owner = _COMPACT.setdefault(selection, {})
    if owner not in per_owner:
      with tf.device(storage.device):
        # In no collection and never read before a step assigns it.
        per_owner[owner] = tf.compat.v1.Variable(
            lambda: tf.zeros(shape, storage.dtype.base_dtype),
            trainable=False, collections=[], use_resource=True,
            name=_variables.checkpoint_name(table).replace(":", "_")
            + "_tfpartial_compact")
    return per_owner[owner]


def compact_gradient(grad: Gradient, selection: Rows, sparse: bool) -> Gradient:
  """`grad` of the table, cut down to the trainable rows, in their order.

  A sparse gradient stays sparse when `sparse` (a lazy optimizer updates
  only the rows named); otherwise it becomes a dense gradient of the small
  variable, summing repeated rows as densifying it would.
  """
  if grad is None:
    return None
  rows = _tensors.rows_tensor(selection)
  if not isinstance(grad, tf.IndexedSlices):
    return tf.gather(grad, rows)
  indices = tf.cast(grad.indices, tf.int64)
  position = tf.minimum(tf.searchsorted(rows, indices), rows.shape[0] - 1)
  hit = tf.equal(tf.gather(rows, position), indices)
  if sparse:
    return tf.IndexedSlices(tf.boolean_mask(grad.values, hit),
                            tf.boolean_mask(position, hit),
                            tf.constant((selection.rows.size,)
                                        + tuple(selection.shape[1:]),
                                        tf.int64))
  values = _tensors.select(
      tf.reshape(hit, [-1] + [1] * (len(selection.shape) - 1)), grad.values,
      tf.zeros_like(grad.values))
  return tf.math.unsorted_segment_sum(values, position, rows.shape[0])


def guard(table: Variable, selection: Rows) -> "CompactGuard":
  """The guard of a compact step on `table`, with its compact variable."""
  return CompactGuard(table, compact_variable(table, selection), selection)


class CompactGuard(_restore.Guard):
  """Copies the trainable rows in before the update and out after it."""

  def __init__(self, table: Variable, small: tf.Variable, selection: Rows):
    self.variable, self.small, self.selection = table, small, selection

  def before(self, graph: bool) -> Tuple[Optional[Any], tf.Tensor]:
    rows = _tensors.rows_tensor(self.selection)
    op = self.small.assign(_restore.gather_rows(self.variable, rows),
                           read_value=False)
    return (op if graph else None), rows

  def after(self, rows: tf.Tensor) -> Any:
    return _distribute.update(self.variable, _restore.scatter,
                              (rows, self.small.read_value()))
