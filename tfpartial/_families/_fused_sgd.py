"""v1 gradient descent and momentum: the freeze inside the update, in one
pass.

`tf.compat.v1.train.GradientDescentOptimizer` and `MomentumOptimizer` are
one fused TensorFlow op per variable (`ApplyGradientDescent`,
`ApplyMomentum`), so the unfused step's gradient mask, snapshot, select and
assign are large against them. For those two classes themselves (not
subclasses, which may update differently) tfpartial's compiled kernel
(`_native`, `_kernels/sgd.h`) makes the update's own pass and keeps the
frozen elements as it goes, leaving the variable and the momentum slot
exactly as the unfused step does (TensorFlow's order of operations,
`training_ops.cc`).

The optimizer still creates its slots and prepares its hyper-parameters;
only its per-variable dense update differs, for the variables the step's
`Plan` names (`_fused.py`). That update reads private attributes of the
optimizers (`_learning_rate_tensor`, `_momentum_tensor`, `_use_nesterov`,
`_use_locking`), as a subclass's `_apply_dense` does; there is no public
way to ask for them.

Gradient descent has no slot, so for a mostly frozen variable its kernel
takes the trainable elements' offsets and touches only those
(`_kernels/_inputs.trainable_offsets`).

Where `_fused_adam` serves: in a TF1 graph, eagerly and in a `tf.function`
XLA does not compile, on CPU, outside `tf.distribute`, for float32 and
float64.
"""

from __future__ import annotations

from typing import Any, cast

import tensorflow as tf

from tfpartial._families import _fused_adam
from tfpartial._kernels import _native
from tfpartial._step import _fused


class FusedGradientDescentUpdate(_fused_adam.V1DenseUpdate):
  """Mixed in before `GradientDescentOptimizer`: planned variables get the
  kernel."""

  def _tfpartial_kernel_update(self, grad: tf.Tensor, var: tf.Variable,
                               frozen: tf.Tensor, ref: bool) -> Any:
    return _update(self, grad, var, frozen, ref)


class FusedMomentumUpdate(FusedGradientDescentUpdate):
  """Mixed in before `MomentumOptimizer`: planned variables get the
  kernel."""


def _update(optimizer: Any, grad: tf.Tensor, var: tf.Variable,
            frozen: tf.Tensor, ref: bool) -> Any:
  library = cast(Any, _native.library())  # Loaded: the plan took `var`.
  dtype = var.dtype.base_dtype
  # As the optimizers' _apply_dense casts them.
  lr = tf.cast(optimizer._learning_rate_tensor, dtype)
  if not isinstance(optimizer, tf.compat.v1.train.MomentumOptimizer):
    if ref:
      return library.tfpartial_apply_gradient_descent(
          var, lr, grad, frozen, use_locking=optimizer._use_locking).op
    return library.tfpartial_resource_apply_gradient_descent(
        var.handle, lr, grad, frozen, use_locking=optimizer._use_locking)
  momentum = tf.cast(optimizer._momentum_tensor, dtype)
  accum = optimizer.get_slot(var, "momentum")
  options = dict(use_locking=optimizer._use_locking,
                 use_nesterov=bool(optimizer._use_nesterov))
  if ref:
    return library.tfpartial_apply_momentum(
        var, accum, lr, grad, momentum, frozen, **options).op
  return library.tfpartial_resource_apply_momentum(
      var.handle, accum.handle, lr, grad, momentum, frozen, **options)


GRADIENT_DESCENT = _fused.FusedKind(
    base=tf.compat.v1.train.GradientDescentOptimizer,
    mixin=FusedGradientDescentUpdate, serves=_fused_adam.serves,
    frozen=_fused_adam.frozen, offsets=lambda optimizer: True)
MOMENTUM = _fused.FusedKind(
    base=tf.compat.v1.train.MomentumOptimizer, mixin=FusedMomentumUpdate,
    serves=_fused_adam.serves, frozen=_fused_adam.frozen)
