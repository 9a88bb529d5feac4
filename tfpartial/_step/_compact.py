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

from tfpartial._frozen import _tensors
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import RowSet, Selection
from tfpartial._frozen._types import Gradient, Variable
from tfpartial._step import _distribute
from tfpartial._step import _restore

# row set -> {graph or "eager": the compact variable}.
_Owners = Dict[Union[str, tf.Graph], tf.Variable]
_COMPACT: "weakref.WeakKeyDictionary[RowSet, _Owners]" = (
    weakref.WeakKeyDictionary())


def trained_rows(selection: Selection) -> RowSet:
  """The rows a compact selection trains (only whole rows are compact)."""
  row_set = selection.row_set
  if row_set is None or not row_set.trains:
    raise ValueError(f"compact training takes the rows that train; got "
                     f"{selection.describe()}")
  return row_set


def compact_variable(table: Variable, selection: Selection) -> tf.Variable:
  """The variable holding `table`'s trainable rows, made once per graph."""
  row_set = trained_rows(selection)
  shape = (row_set.rows.size,) + tuple(row_set.shape[1:])
  storage = _variables.storage(table)
  with tf.init_scope():
    owner = ("eager" if tf.executing_eagerly()
             else tf.compat.v1.get_default_graph())
    per_owner = _COMPACT.setdefault(row_set, {})
    if owner not in per_owner:
      with tf.device(storage.device):
        # In no collection and never read before a step assigns it.
        per_owner[owner] = tf.compat.v1.Variable(
            lambda: tf.zeros(shape, storage.dtype.base_dtype),
            trainable=False, collections=[], use_resource=True,
            name=_variables.checkpoint_name(table).replace(":", "_")
            + "_tfpartial_compact")
    return per_owner[owner]


def compact_gradient(grad: Gradient, selection: Selection,
                     sparse: bool) -> Gradient:
  """`grad` of the table, cut down to the trainable rows, in their order.

  A sparse gradient stays sparse when `sparse` (a lazy optimizer updates
  only the rows named); otherwise it becomes a dense gradient of the small
  variable, summing repeated rows as densifying it would.
  """
  if grad is None:
    return None
  row_set = trained_rows(selection)
  rows = _tensors.rows_tensor(row_set)
  if not isinstance(grad, tf.IndexedSlices):
    return tf.gather(grad, rows)
  indices = tf.cast(grad.indices, tf.int64)
  position = tf.minimum(tf.searchsorted(rows, indices), rows.shape[0] - 1)
  hit = tf.equal(tf.gather(rows, position), indices)
  if sparse:
    return tf.IndexedSlices(tf.boolean_mask(grad.values, hit),
                            tf.boolean_mask(position, hit),
                            tf.constant((row_set.rows.size,)
                                        + tuple(row_set.shape[1:]),
                                        tf.int64))
  values = _tensors.select(
      tf.reshape(hit, [-1] + [1] * (len(selection.shape) - 1)), grad.values,
      tf.zeros_like(grad.values))
  return tf.math.unsorted_segment_sum(values, position, rows.shape[0])


def guard(table: Variable, selection: Selection) -> "CompactGuard":
  """The guard of a compact step on `table`, with its compact variable."""
  return CompactGuard(table, compact_variable(table, selection),
                      trained_rows(selection))


class CompactGuard(_restore.Guard):
  """Copies the trainable rows in before the update and out after it."""

  def __init__(self, table: Variable, small: tf.Variable, row_set: RowSet):
    self.variable, self.small, self.row_set = table, small, row_set

  def before(self, graph: bool) -> Tuple[Optional[Any], tf.Tensor]:
    rows = _tensors.rows_tensor(self.row_set)
    op = self.small.assign(_restore.gather_rows(self.variable, rows),
                           read_value=False)
    return (op if graph else None), rows

  def after(self, rows: tf.Tensor) -> Any:
    return _distribute.update(self.variable, _restore.scatter,
                              (rows, self.small.read_value()))
