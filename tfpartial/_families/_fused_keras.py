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

Where no kernel serves an eager step (no compiler, `TFPARTIAL_KERNELS=off`,
a GPU), the same mixins give Adam, AdamW and SGD the select update of
`_select_keras`, made of TensorFlow ops.

Kernels serve only in TF2 code that XLA does not compile
(`_tfprivate.in_xla`), on CPU, outside `tf.distribute`; both kinds of fast
path only with no clipping, loss scaling, gradient accumulation, EMA or
AMSGrad, and for variables without a constraint (Keras applies it after
the update) or `overwrite_with_gradient`. A float64 gradient of a float32
variable is cast first, as Keras casts it.
"""

from __future__ import annotations

import functools
from typing import Any, List, Optional, Tuple, cast

import tensorflow as tf

from tfpartial._families import _select_keras
from tfpartial._frozen import _compat
from tfpartial._frozen import _tfprivate
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Gradient, Mode, Optimizer, Variable
from tfpartial._kernels import _inputs
from tfpartial._kernels import _native
from tfpartial._step import _fused


def _serves(optimizer: Optimizer, mode: Mode) -> bool:
  return (mode is Mode.EAGER and _select_keras.plain_settings(optimizer)
          and _fused.on_cpu_alone() and not _tfprivate.in_xla())


def _frozen(grad: Gradient, variable: Variable,
            selection: Selection) -> Optional[tf.Tensor]:
  if (not isinstance(_variables.storage(variable), tf.Variable)
      or getattr(variable, "constraint", None) is not None
      or getattr(variable, "overwrite_with_gradient", False)):
    return None
  return _inputs.kernel_mask(grad, variable, selection)


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
  return _inputs.kernel_mask(grad, variable, selection, sparse=True)


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


class PlannedWeightDecay:
  """Mixed in before a Keras optimizer class (Keras 3 or 2): its weight
  decay (Keras' private `_apply_weight_decay`) skips the variables the
  step's plan names, whose kernel decays them in its own pass."""

  def _apply_weight_decay(self, variables: List[Any]) -> Any:
    kept = [v for v in variables
            if _fused.planned(cast(Any, self), v) is None]
    return super()._apply_weight_decay(kept)  # type: ignore[misc]


class _FusedKerasUpdate(PlannedWeightDecay):
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
  decay, weight_decay = _select_keras.weight_decay_of(
      optimizer, keras_variable, dtype)
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


def _sgd_update(optimizer: Any, gradient: Any,
                taken: Tuple[Variable, tf.Tensor], learning_rate: Any) -> Any:
  keras_variable, frozen = taken
  dtype = tf.as_dtype(keras_variable.dtype)
  # As SGD.update_step computes them.
  lr = tf.cast(learning_rate, dtype)
  gradient = tf.cast(gradient, dtype)
  decay, weight_decay = _select_keras.weight_decay_of(
      optimizer, keras_variable, dtype)
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


class FusedKerasAdamUpdate(_FusedKerasUpdate):
  """Mixed in before Keras' Adam or AdamW."""

  _fused_update = staticmethod(_adam_update)
  _select_update = staticmethod(_select_keras.adam_update)


class FusedKerasSgdUpdate(_FusedKerasUpdate):
  """Mixed in before Keras' SGD."""

  _fused_update = staticmethod(_sgd_update)
  _select_update = staticmethod(_select_keras.sgd_update)


def _kinds() -> Tuple[_fused.FusedKind, ...]:
  if not _compat.KERAS_3:
    return ()
  import keras  # pylint: disable=g-import-not-at-top
  # Keras 3 counts a step as `iterations.assign(iterations + 1)`: eagerly
  # the kernel's steps hold the step lock for it (`counts_racily`).
  adam = [_fused.FusedKind(base=base, mixin=FusedKerasAdamUpdate,
                            serves=_serves, frozen=_adam_frozen,
                            counts_racily=True)
          for base in (keras.optimizers.Adam, keras.optimizers.AdamW)]
  # Where the kernel is not loaded or cannot serve (a GPU): eagerly, the
  # select update (for SGD too, below).
  adam += [_fused.FusedKind(base=base, mixin=FusedKerasAdamUpdate,
                            serves=_select_keras.serves,
                            frozen=_select_keras.select_mask, library=False)
           for base in (keras.optimizers.Adam, keras.optimizers.AdamW)]
  # SGD without momentum has no slot: a mostly frozen variable's update
  # can touch only its trainable elements.
  sgd = _fused.FusedKind(
      base=keras.optimizers.SGD, mixin=FusedKerasSgdUpdate, serves=_serves,
      frozen=_frozen,
      offsets=lambda optimizer: cast(Any, optimizer).momentum == 0,
      counts_racily=True)
  sgd_select = _fused.FusedKind(
      base=keras.optimizers.SGD, mixin=FusedKerasSgdUpdate,
      serves=_select_keras.serves, frozen=_select_keras.select_mask,
      library=False)
  return (*adam, sgd, sgd_select)


# The Keras 3 classes with a kernel (none under Keras 2).
KINDS = _kinds()
