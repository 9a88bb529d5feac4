"""Keras 3's Adam, AdamW and SGD: the freeze inside the update, in one pass.

Keras' update is a chain of separate element-wise ops (weight decay, then
`m`, `v` and the variable, about a dozen passes over memory), and behind
it an exact freeze adds a gradient mask, a copy-on-write and a restore.
For `keras.optimizers.Adam` and `AdamW` themselves (not subclasses) the
compiled kernel (`_native`) does the weight decay and the update in one
pass and keeps the frozen elements, leaving var, m and v exactly as the
unfused step does op by op: the scalars (alpha, 1 - beta_1, ...) are
computed here with the ops Keras computes them with, and the kernel
applies them in Keras' order of operations. (In a `tf.function`, Grappler's
arithmetic optimizer reassociates Keras' own `variable * wd * lr`, so
there plain AdamW differs from op-by-op AdamW, and from the kernel, in
the last bit of some elements.)

`keras.optimizers.SGD` (plain, momentum, Nesterov, with weight decay or
not) has a kernel too: Keras' update is two ops without momentum and four
or six with it; the kernel makes one pass in Keras' order of operations
(`_kernels/sgd.h`).

The mixins' `update_step` and `_apply_weight_decay` act for the variables
of the step's `Plan` (`_fused.py`) and leave the rest to Keras; they read
Keras' private `_momentums`, `_velocities`, `_get_variable_index` and
`_use_weight_decay` (and SGD's `momentums`), as a subclass's `update_step`
does, here only.

Only in TF2 code that XLA does not compile (`_tfprivate.in_xla`), on CPU,
outside `tf.distribute`, with no clipping, loss scaling, gradient
accumulation, EMA or AMSGrad, and for variables without a constraint (Keras
applies it after the update) or `overwrite_with_gradient`. A float64
gradient of a float32 variable is cast first, as Keras casts it.
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Tuple, cast

import tensorflow as tf

from tfpartial import _compat
from tfpartial import _fused
from tfpartial import _mask
from tfpartial import _native
from tfpartial import _tensors
from tfpartial import _tfprivate
from tfpartial import _variables
from tfpartial._selection import Selection
from tfpartial._types import Gradient, Optimizer, Variable


def _plain_settings(optimizer: Optimizer) -> bool:
  """No clipping, loss scaling, gradient accumulation, EMA or AMSGrad: the
  settings under which Keras' step is its `update_step` alone."""
  options: Any = optimizer  # A Keras 3 optimizer: its settings.
  return not (getattr(options, "amsgrad", False) or options.use_ema
              or options.clipnorm or options.clipvalue
              or options.global_clipnorm
              or getattr(options, "gradient_accumulation_steps", None)
              or getattr(options, "loss_scale_factor", None) is not None)


def _serves(optimizer: Optimizer, path: str) -> bool:
  return (path == "eager" and _plain_settings(optimizer)
          and _fused.on_cpu_alone() and not _tfprivate.in_xla())


def _frozen(grad: Gradient, variable: Variable,
            selection: Selection) -> Optional[tf.Tensor]:
  if (not isinstance(_variables.storage(variable), tf.Variable)
      or getattr(variable, "constraint", None) is not None
      or getattr(variable, "overwrite_with_gradient", False)):
    return None
  return _fused.kernel_mask(grad, variable, selection)


def _adam_frozen(grad: Gradient, variable: Variable,
                 selection: Selection) -> Optional[tf.Tensor]:
  """As `_frozen`, and for a `tf.IndexedSlices` gradient too (Keras'
  Adam densifies it; the sparse kernel sums its rows as densifying does)."""
  if not isinstance(grad, tf.IndexedSlices):
    return _frozen(grad, variable, selection)
  if (not isinstance(_variables.storage(variable), tf.Variable)
      or getattr(variable, "constraint", None) is not None
      or getattr(variable, "overwrite_with_gradient", False)):
    return None
  return _fused.kernel_mask(grad, variable, selection, sparse=True)


@functools.lru_cache(maxsize=None)
def _square_keeps_slices() -> bool:
  """Whether Keras' `ops.square` keeps a `tf.IndexedSlices` sparse (then
  Adam's `v` sees the densified squares, a*a + b*b for a row named twice),
  or densifies it first ((a + b) * (a + b))."""
  import keras  # pylint: disable=g-import-not-at-top
  with tf.init_scope():
    slices = tf.IndexedSlices(tf.ones([1, 1]), tf.constant([0]),
                              tf.constant([1, 1]))
    return isinstance(keras.ops.square(slices), tf.IndexedSlices)


class _FusedKerasUpdate(_fused.PlannedWeightDecay):
  """Planned variables get `_fused_update` (a kernel) or, where the plan is
  a select update's, `_select_update`, weight decay included; the others
  Keras' own update."""

  _fused_update: Any = None  # (optimizer, gradient, taken, lr) -> op.
  _select_update: Any = None  # The same, of TensorFlow ops.

  def update_step(self, gradient: Any, variable: Any,
                  learning_rate: Any) -> Any:
    taken = _fused.planned(cast(Any, self), variable)
    if taken is None:
      return super().update_step(  # type: ignore[misc]
          gradient, variable, learning_rate)
    update = (type(self)._fused_update if _fused.planned_library()
              else type(self)._select_update)
    return update(self, gradient, taken, learning_rate)


def _adam_update(optimizer: Any, gradient: Any,
            taken: Tuple[Variable, tf.Tensor], learning_rate: Any) -> Any:
  keras_variable, frozen = taken
  dtype = tf.as_dtype(keras_variable.dtype)
  # As Adam.update_step computes them, the gradient cast as Keras casts it.
  lr = tf.cast(learning_rate, dtype)
  if isinstance(gradient, tf.IndexedSlices):
    gradient = tf.IndexedSlices(tf.cast(gradient.values, dtype),
                                gradient.indices, gradient.dense_shape)
  else:
    gradient = tf.cast(gradient, dtype)
  local_step = tf.cast(optimizer.iterations + 1, dtype)
  beta_1_power = tf.pow(tf.cast(optimizer.beta_1, dtype), local_step)
  beta_2_power = tf.pow(tf.cast(optimizer.beta_2, dtype), local_step)
  alpha = lr * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power)
  index = optimizer._get_variable_index(keras_variable)
  m = _variables.storage(optimizer._momentums[index])
  v = _variables.storage(optimizer._velocities[index])
  decay, weight_decay = _decay(optimizer, keras_variable, dtype)
  scalars = (alpha, tf.constant(1 - optimizer.beta_1, dtype),
             tf.constant(1 - optimizer.beta_2, dtype),
             tf.constant(optimizer.epsilon, dtype), weight_decay, lr)
  handles = (_variables.storage(keras_variable).handle, m.handle, v.handle)
  library = cast(Any, _native.library())  # Loaded: the plan took it.
  if isinstance(gradient, tf.IndexedSlices):
    return library.tfpartial_resource_apply_keras_adam_sparse(
        *handles, *scalars, gradient.values, gradient.indices, frozen,
        decay=decay, square_of_sum=not _square_keeps_slices())
  return library.tfpartial_resource_apply_keras_adam(
      *handles, *scalars, gradient, frozen, decay=decay)


def _decay(optimizer: Any, keras_variable: Variable,
           dtype: tf.DType) -> Tuple[bool, tf.Tensor]:
  """(whether Keras decays the variable, the decay) as _apply_weight_decay
  computes them; its learning rate is `optimizer.learning_rate`, the one
  apply passes in as `learning_rate`."""
  decay = (optimizer.weight_decay is not None
           and optimizer._use_weight_decay(keras_variable))
  return decay, tf.cast(optimizer.weight_decay or 0.0, dtype)


def _sgd_update(optimizer: Any, gradient: Any,
                taken: Tuple[Variable, tf.Tensor], learning_rate: Any) -> Any:
  keras_variable, frozen = taken
  dtype = tf.as_dtype(keras_variable.dtype)
  # As SGD.update_step computes them.
  lr = tf.cast(learning_rate, dtype)
  gradient = tf.cast(gradient, dtype)
  decay, weight_decay = _decay(optimizer, keras_variable, dtype)
  library = cast(Any, _native.library())  # Loaded: the plan took it.
  variable = _variables.storage(keras_variable)
  if optimizer.momentum == 0:
    return library.tfpartial_resource_apply_keras_sgd(
        variable.handle, lr, weight_decay, gradient, frozen, decay=decay)
  index = optimizer._get_variable_index(keras_variable)
  m = _variables.storage(optimizer.momentums[index])
  return library.tfpartial_resource_apply_keras_momentum(
      variable.handle, m.handle, lr, tf.cast(optimizer.momentum, dtype),
      weight_decay, gradient, frozen, decay=decay,
      nesterov=bool(optimizer.nesterov))


def _serves_select(optimizer: Optimizer, path: str) -> bool:
  """The select update serves eager steps only, on any device: in a
  function the graph's executor frees what a step no longer needs itself,
  and Grappler may rewrite Keras' ops and these differently."""
  return (path == "eager" and tf.executing_eagerly()
          and _plain_settings(optimizer) and not tf.distribute.has_strategy())


def _select_frozen(grad: Gradient, variable: Variable,
                   selection: Selection) -> Optional[tf.Tensor]:
  """The frozen mask as `_tensors.select` takes it (the variable's shape,
  or one bool per row shaped [rows, 1, ...]), for a dense gradient."""
  storage = _variables.storage(variable)
  if (not isinstance(storage, tf.Variable) or not isinstance(grad, tf.Tensor)
      or getattr(variable, "constraint", None) is not None
      or getattr(variable, "overwrite_with_gradient", False)
      or not tf.as_dtype(storage.dtype).is_floating):
    return None
  shape = tf.TensorShape(storage.shape)
  if not shape.is_fully_defined() or not grad.shape.is_compatible_with(shape):
    return None
  if selection.is_everything:
    return tf.ones(shape[:1].concatenate([1] * (shape.rank - 1))
                   if shape.rank else [], tf.bool)
  frozen = _tensors.frozen_mask_tensor(selection)
  rows = [shape[0]] + [1] * (shape.rank - 1) if shape.rank else []
  if frozen.shape not in (shape, tf.TensorShape(rows)):
    return None
  return frozen


def _adam_select_update(optimizer: Any, gradient: Any,
                        taken: Tuple[Variable, tf.Tensor],
                        learning_rate: Any) -> Any:
  """Keras' Adam (and AdamW's weight decay) op for op, as the unfused step
  runs them on the masked gradient, but the variable is written once, as
  a select of its value before and after: no snapshot kept across the
  update (whose copy-on-write copies the variable), no restore, and the
  masked gradient is let go before the variable's update, where Keras'
  temporaries peak."""
  import keras  # pylint: disable=g-import-not-at-top
  ops = keras.ops
  keras_variable, frozen = taken
  variable = _variables.storage(keras_variable)
  dtype = tf.as_dtype(keras_variable.dtype)
  # Adam.update_step's ops, in its order.
  lr = ops.cast(learning_rate, dtype)
  masked = _mask.zero_where(frozen, ops.cast(gradient, dtype))
  del gradient  # The caller's is the caller's; this frame lets it go.
  local_step = ops.cast(optimizer.iterations + 1, dtype)
  beta_1_power = ops.power(ops.cast(optimizer.beta_1, dtype), local_step)
  beta_2_power = ops.power(ops.cast(optimizer.beta_2, dtype), local_step)
  index = optimizer._get_variable_index(keras_variable)
  m = optimizer._momentums[index]
  v = optimizer._velocities[index]
  alpha = lr * ops.sqrt(1 - beta_2_power) / (1 - beta_1_power)
  optimizer.assign_add(
      m, ops.multiply(ops.subtract(masked, m), 1 - optimizer.beta_1))
  optimizer.assign_add(
      v, ops.multiply(ops.subtract(ops.square(masked), v),
                      1 - optimizer.beta_2))
  del masked
  step = ops.divide(ops.multiply(m, alpha),
                    ops.add(ops.sqrt(v), optimizer.epsilon))
  before = variable.read_value()
  decay, weight_decay = _decay(optimizer, keras_variable, dtype)
  if decay:  # _apply_weight_decay's `variable.assign_sub(variable * wd * lr)`.
    new = tf.subtract(tf.subtract(before, before * weight_decay * lr), step)
  else:
    new = tf.subtract(before, step)
  del step
  kept = _tensors.select(frozen, before, new)
  del new, before
  return variable.assign(kept, read_value=False)


class FusedKerasAdamUpdate(_FusedKerasUpdate):
  """Mixed in before Keras' Adam or AdamW."""

  _fused_update = staticmethod(_adam_update)
  _select_update = staticmethod(_adam_select_update)


class FusedKerasSgdUpdate(_FusedKerasUpdate):
  """Mixed in before Keras' SGD."""

  _fused_update = staticmethod(_sgd_update)


def _kinds() -> Tuple[_fused.FusedKind, ...]:
  if not _compat.KERAS_3:
    return ()
  import keras  # pylint: disable=g-import-not-at-top
  adam = [_fused.FusedKind(base=base, mixin=FusedKerasAdamUpdate,
                            serves=_serves, frozen=_adam_frozen)
          for base in (keras.optimizers.Adam, keras.optimizers.AdamW)]
  # Where the kernel is not loaded or cannot serve (a GPU): eagerly, the
  # select update.
  adam += [_fused.FusedKind(base=base, mixin=FusedKerasAdamUpdate,
                            serves=_serves_select, frozen=_select_frozen,
                            library=False)
           for base in (keras.optimizers.Adam, keras.optimizers.AdamW)]
  # SGD without momentum has no slot: a mostly frozen variable's update
  # can touch only its trainable elements.
  sgd = _fused.FusedKind(base=keras.optimizers.SGD, mixin=FusedKerasSgdUpdate,
                         serves=_serves, frozen=_frozen,
                         offsets=lambda optimizer: cast(Any, optimizer).momentum == 0)
  return (*adam, sgd)


# The Keras 3 classes with a kernel (none under Keras 2).
KINDS = _kinds()
