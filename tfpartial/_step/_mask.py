"""Gradient masking: frozen elements get an exact zero, dense or sparse.

`tf.where` rather than `grad * mask`: a product keeps NaN (0 * NaN is NaN)
and turns Inf into NaN, so one bad gradient would poison a frozen element.

A large gradient (`SCALAR_FROM` elements or more) is masked against a
scalar zero (`SelectV2`): no zeros tensor the size of the gradient is made,
and in a function the select's output can take the gradient's buffer, so
the mask adds no gradient-sized tensor to the step's peak memory. That
select is slower on CPU than `Select` against a zeros tensor, so smaller
gradients, where memory matters less than time, keep `Select`
(docs/performance.md, "Memory", has the measurements behind the choice).
"""

from __future__ import annotations

from typing import List

import tensorflow as tf

from tfpartial._frozen import _tensors
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import GradAndVar, Gradient, GradsAndVars
from tfpartial._step import _plan
from tfpartial._step._plan import Action, Entry

# Gradients of this many elements or more are masked against a scalar 0.
SCALAR_FROM = 1 << 21

Lookup = _plan.Lookup


def mask_gradients(lookup: Lookup,
                   grads_and_vars: GradsAndVars) -> List[GradAndVar]:
  """The pairs with frozen gradients zeroed and fully frozen pairs dropped.

  Args:
    lookup: gives each variable's frozen selection, or None.
    grads_and_vars: (gradient, variable) pairs; a gradient may be a dense
      tensor, a `tf.IndexedSlices` or None.

  Returns:
    A new list of pairs in the same order: `None` gradients kept as they are,
    `tf.IndexedSlices` still sparse, fully frozen variables left out.
  """
  entries = _plan.plan(list(grads_and_vars), lookup, keep_fully_frozen=False)
  return [(masked(entry), entry.variable) for entry in entries
          if entry.action is not Action.DROP]


def mask_aligned(lookup: Lookup,
                 grads_and_vars: GradsAndVars) -> List[Gradient]:
  """One gradient per pair, in order: frozen elements exactly 0.

  A fully frozen variable's gradient becomes an exact zero of its form (a
  `tf.IndexedSlices` stays sparse), never None: `tf.clip_by_global_norm`
  counts it as 0, and every optimizer family takes it without the warning
  a None gradient gives. A None gradient stays None.
  """
  entries = _plan.plan(list(grads_and_vars), lookup, keep_fully_frozen=True)
  return [masked(entry) for entry in entries]


def masked(entry: Entry) -> Gradient:
  """The gradient the optimizer gets for a planned entry: an exact zero
  (ZERO), frozen elements zeroed (MASK), else the gradient as it is."""
  if entry.action is Action.ZERO:
    return zeroed(entry.grad)
  if entry.action is Action.MASK and entry.selection is not None:
    return mask_gradient(entry.grad, entry.selection)
  return entry.grad


def zeroed(grad: Gradient) -> Gradient:
  """An exact zero gradient of `grad`'s form (None stays None)."""
  if grad is None:
    return None
  if isinstance(grad, tf.IndexedSlices):
    return tf.IndexedSlices(tf.zeros_like(grad.values), grad.indices,
                            grad.dense_shape)
  return tf.zeros_like(grad)


def mask_gradient(grad: Gradient, selection: Selection) -> Gradient:
  """`grad` with an exact 0 wherever `selection` is frozen."""
  with tf.name_scope("tfpartial_mask"):
    if isinstance(grad, tf.IndexedSlices):
      return _mask_slices(grad, selection)
    return _mask_dense(tf.convert_to_tensor(grad), selection)


def _mask_dense(grad: tf.Tensor, selection: Selection) -> tf.Tensor:
  return zero_where(_tensors.frozen_mask_tensor(selection), grad)


def _mask_slices(grad: tf.IndexedSlices,
                 selection: Selection) -> tf.IndexedSlices:
  # Only the rows the gradient names are looked at; it stays sparse.
  frozen_rows = tf.gather(_tensors.frozen_mask_tensor(selection), grad.indices)
  values = zero_where(frozen_rows, grad.values)
  return tf.IndexedSlices(values, grad.indices, grad.dense_shape)


def zero_where(frozen: tf.Tensor, values: tf.Tensor) -> tf.Tensor:
  """`values` with an exact 0 where `frozen`: against a scalar zero for a
  large tensor (its size known when the step is built), else against a
  zeros tensor with the faster `Select`."""
  size = values.shape.num_elements()
  if size is not None and size >= SCALAR_FROM:
    return tf.where(frozen, tf.zeros([], values.dtype), values)
  return _tensors.select(frozen, tf.zeros_like(values), values)
