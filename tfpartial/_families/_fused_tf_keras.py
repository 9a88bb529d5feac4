"""Keras 2's Adam, AdamW and SGD (`tf_keras`, and `keras` on TensorFlow
2.15): the freeze inside the update, in one pass.

Keras 2's dense Adam update is the one Keras 3 makes, op for op: weight
decay first (`variable.assign_sub(variable * wd * lr)`, in
`_apply_weight_decay`), then `m += (g - m) * (1 - beta_1)`,
`v += (g * g - v) * (1 - beta_2)` and
`variable -= (m * alpha) / (sqrt(v) + epsilon)`, with alpha computed as
Keras 3 computes it. So the Keras Adam kernel (`_kernels/adam.h`) serves
it: the scalars are computed here with Keras 2's own ops (epsilon scaled
as `adaptive_epsilon` asks, where the release has it), and the kernel
applies them in that order, leaving var, m and v as the unfused step does.
Keras 2's dense SGD update is Keras 3's SGD with momentum to the bit (its
slot is written at momentum 0 too), so the Keras momentum kernel serves
it.

The mixin's `update_step` and `_apply_weight_decay` act for the variables
of the step's `Plan` (`_fused.py`) and leave the rest to Keras; they read
Keras 2's private `_momentums`, `_velocities`, `_index_dict`, `_var_key`
and `_use_weight_decay` (and SGD's `momentums`), as a subclass's
`update_step` does, here only.

The `legacy` Adam (`tf.keras.optimizers.legacy.Adam` on TensorFlow 2.15,
what a canned Estimator's `optimizer="Adam"` makes) updates a dense
gradient with TensorFlow's fused `ResourceApplyAdam`, the op v1 Adam
calls: its kernel (`_fused_adam`) serves it, with the coefficients the
optimizer's own `_prepare_local` made (`_resource_apply_dense`'s
`apply_state`), in TF1 graphs (an Estimator's) as in TF2 code.

Only for the new optimizers' `Adam`, `AdamW` and `SGD` and the legacy
`Adam` themselves (not subclasses), in TF2 code that XLA does not compile
(and the legacy Adam in TF1 graphs), on CPU, outside `tf.distribute` and
DTensor, with no clipping, EMA, AMSGrad or gradient transformers, for
dense gradients of the variable's dtype (the sparse update of Keras 2 is
another computation), and variables without a constraint (Keras applies
it after the update). The Keras 2 packages count once loaded: tfpartial
never imports `tf_keras`.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any, Optional, Tuple, cast

import tensorflow as tf

from tfpartial._families import _fused_keras
from tfpartial._frozen import _compat
from tfpartial._frozen import _tfprivate
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Gradient, Mode, Optimizer, Variable
from tfpartial._kernels import _inputs
from tfpartial._kernels import _native
from tfpartial._step import _fused


def _serves(optimizer: Optimizer, mode: Mode) -> bool:
  options: Any = optimizer  # A Keras 2 optimizer: its settings.
  if mode is not Mode.EAGER:
    return False
  if (options.jit_compile or getattr(options, "amsgrad", False)
      or options.use_ema or options.clipnorm or options.clipvalue
      or options.global_clipnorm
      or getattr(options, "_mesh", None) is not None):
    return False
  return _fused.on_cpu_alone() and not _tfprivate.in_xla()


def _legacy_serves(optimizer: Optimizer, mode: Mode) -> bool:
  """The legacy Adam: in a TF1 graph too; not with AMSGrad, clipping or
  gradient transformers (which read the gradient the kernel is given,
  frozen elements' too)."""
  options: Any = optimizer  # A Keras 2 legacy optimizer: its settings.
  if mode is not Mode.TF1_GRAPH and _tfprivate.in_xla():
    return False
  if (options.amsgrad or options.clipnorm or options.clipvalue
      or options.global_clipnorm or options.gradient_transformers):
    return False
  return _fused.on_cpu_alone()


def _legacy_frozen(grad: Gradient, variable: Variable,
                   selection: Selection) -> Optional[tf.Tensor]:
  """As `_frozen`; packed in a TF1 graph when large, as for v1 Adam (a
  graph constant is copied many times over)."""
  if _frozen(grad, variable, selection) is None:
    return None
  with tf.init_scope():  # A tf.function's constants are made eagerly.
    graph = not tf.executing_eagerly()
  return _inputs.kernel_mask(grad, variable, selection, packed=graph)


def _frozen(grad: Gradient, variable: Variable,
            selection: Selection) -> Optional[tf.Tensor]:
  stored = _variables.storage(variable)
  if (not isinstance(stored, tf.Variable)
      or getattr(variable, "constraint", None) is not None
      or not isinstance(grad, tf.Tensor)
      or grad.dtype.base_dtype != stored.dtype.base_dtype):
    return None
  return _inputs.kernel_mask(grad, variable, selection)


class _FusedTfKerasUpdate(_fused_keras.PlannedWeightDecay):
  """Planned variables get `_fused_update` (a kernel), weight decay
  included; the others Keras 2's own update."""

  _fused_update: Any = None  # (optimizer, gradient, variable, frozen) -> op.

  def update_step(self, gradient: Any, variable: Any) -> Any:
    taken = _fused.planned(cast(Any, self), variable)
    if taken is None:
      return super().update_step(gradient, variable)  # type: ignore[misc]
    return type(self)._fused_update(self, gradient, variable, taken[1])


def _adam_update(optimizer: Any, gradient: tf.Tensor, variable: tf.Variable,
                 frozen: tf.Tensor) -> Any:
  stored = _variables.storage(variable)
  dtype = stored.dtype.base_dtype
  # As Keras 2's Adam.update_step and _apply_weight_decay compute them.
  lr = tf.cast(optimizer.learning_rate, dtype)
  local_step = tf.cast(optimizer.iterations + 1, dtype)
  beta_1_power = tf.pow(tf.cast(optimizer.beta_1, dtype), local_step)
  beta_2_power = tf.pow(tf.cast(optimizer.beta_2, dtype), local_step)
  index = optimizer._index_dict[optimizer._var_key(variable)]
  m, v = optimizer._momentums[index], optimizer._velocities[index]
  alpha = lr * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power)
  if getattr(optimizer, "adaptive_epsilon", False):
    epsilon = optimizer.epsilon * tf.sqrt(1 - beta_2_power)
  else:
    epsilon = tf.constant(optimizer.epsilon, dtype)
  decay, weight_decay = _decay(optimizer, variable, dtype)
  library = cast(Any, _native.library())  # Loaded: the plan took it.
  return library.tfpartial_resource_apply_keras_adam(
      stored.handle, _variables.storage(m).handle,
      _variables.storage(v).handle, alpha,
      tf.constant(1 - optimizer.beta_1, dtype),
      tf.constant(1 - optimizer.beta_2, dtype), epsilon, weight_decay, lr,
      gradient, frozen, decay=decay)


def _decay(optimizer: Any, variable: tf.Variable,
           dtype: tf.DType) -> Tuple[bool, tf.Tensor]:
  """(whether Keras 2 decays the variable, the decay), as its
  `_apply_weight_decay` computes them."""
  decay = (optimizer.weight_decay is not None
           and bool(optimizer._use_weight_decay(variable)))
  return decay, tf.cast(optimizer.weight_decay or 0.0, dtype)


def _sgd_update(optimizer: Any, gradient: tf.Tensor, variable: tf.Variable,
                frozen: tf.Tensor) -> Any:
  """Keras 2's SGD always has a momentum slot and writes it, momentum 0
  too: `m = -g * lr + m * momentum`, then `variable += m` (Nesterov:
  `variable += -g * lr + m * momentum`), which is the Keras momentum
  kernel's `m = m * momentum - g * lr` to the bit (a sum commutes,
  `-(g * lr)` is `(-g) * lr`)."""
  stored = _variables.storage(variable)
  dtype = stored.dtype.base_dtype
  # As Keras 2's SGD.update_step and _apply_weight_decay compute them.
  lr = tf.cast(optimizer.learning_rate, dtype)
  momentum = tf.cast(optimizer.momentum, dtype)
  m = optimizer.momentums[optimizer._index_dict[optimizer._var_key(variable)]]
  decay, weight_decay = _decay(optimizer, variable, dtype)
  library = cast(Any, _native.library())  # Loaded: the plan took it.
  return library.tfpartial_resource_apply_keras_momentum(
      stored.handle, _variables.storage(m).handle, lr, momentum,
      weight_decay, gradient, frozen, decay=decay,
      nesterov=bool(optimizer.nesterov))


class FusedLegacyAdamUpdate:
  """Mixed in before Keras 2's legacy Adam: the variables the step's plan
  names get v1 Adam's kernel, in place of the `ResourceApplyAdam` its
  private `_resource_apply_dense` calls, with the same coefficients."""

  def _resource_apply_dense(self, grad: tf.Tensor, var: tf.Variable,
                            apply_state: Any = None) -> Any:
    taken = _fused.planned(cast(Any, self), var)
    if taken is None:
      return super()._resource_apply_dense(  # type: ignore[misc]
          grad, var, apply_state=apply_state)
    optimizer: Any = self
    key = (var.device, var.dtype.base_dtype)
    coefficients = ((apply_state or {}).get(key)
                    or optimizer._fallback_apply_state(*key))
    library = cast(Any, _native.library())  # Loaded: the plan took it.
    return library.tfpartial_resource_apply_adam(
        var.handle, optimizer.get_slot(var, "m").handle,
        optimizer.get_slot(var, "v").handle, coefficients["beta_1_power"],
        coefficients["beta_2_power"], coefficients["lr_t"],
        coefficients["beta_1_t"], coefficients["beta_2_t"],
        coefficients["epsilon"], grad, taken[1],
        use_locking=optimizer._use_locking)


class FusedTfKerasAdamUpdate(_FusedTfKerasUpdate):
  """Mixed in before Keras 2's Adam or AdamW."""

  _fused_update = staticmethod(_adam_update)


class FusedTfKerasSgdUpdate(_FusedTfKerasUpdate):
  """Mixed in before Keras 2's SGD."""

  _fused_update = staticmethod(_sgd_update)


@functools.lru_cache(maxsize=None)
def _module_kinds(module: ModuleType) -> Tuple[_fused.FusedKind, ...]:
  optimizers = module.optimizers
  return (*(_fused.FusedKind(base=base, mixin=FusedTfKerasAdamUpdate,
                             serves=_serves, frozen=_frozen)
            for base in (optimizers.Adam, optimizers.AdamW)),
          _fused.FusedKind(base=optimizers.SGD, mixin=FusedTfKerasSgdUpdate,
                           serves=_serves, frozen=_frozen),
          _fused.FusedKind(base=optimizers.legacy.Adam,
                           mixin=FusedLegacyAdamUpdate,
                           serves=_legacy_serves, frozen=_legacy_frozen))


def kinds() -> Tuple[_fused.FusedKind, ...]:
  """The kernels for the Keras 2 packages loaded now."""
  return tuple(kind for module in _compat.keras2_modules()
               for kind in _module_kinds(module))
