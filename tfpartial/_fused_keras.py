"""Keras 3's Adam and AdamW: the freeze inside the update, in one pass.

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

While the optimizer's `apply` runs, its `update_step` and
`_apply_weight_decay` are swapped on the instance for the variables the
kernel takes; they read Keras' private `_momentums`, `_velocities`,
`_get_variable_index` and `_use_weight_decay`, as a subclass's
`update_step` does, here only.

Only in TF2 code that XLA does not compile (telling needs TensorFlow's
private `control_flow_util`: no public API says whether a function being
traced will be compiled), on CPU, outside `tf.distribute`, with no
clipping, loss scaling, gradient accumulation, EMA or AMSGrad, and for
variables without a constraint (Keras applies it after the update) or
`overwrite_with_gradient`.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import tensorflow as tf
# No public API tells whether a function being traced will be compiled by
# XLA, which cannot compile a custom op.
from tensorflow.python.ops import control_flow_util  # pylint: disable=g-direct-tensorflow-import

from tfpartial import _compat
from tfpartial import _fused_adam
from tfpartial import _native
from tfpartial import _variables


def for_optimizer(optimizer: Any, path: str) -> Optional["FusedKerasAdam"]:
  """A `FusedKerasAdam` for `optimizer` on `path`, or None."""
  if path != "eager" or not _compat.KERAS_3:
    return None
  import keras  # pylint: disable=g-import-not-at-top
  base = getattr(optimizer, "_tfpartial_base", type(optimizer))
  if base not in (keras.optimizers.Adam, keras.optimizers.AdamW):
    return None
  if (optimizer.amsgrad or optimizer.use_ema or optimizer.clipnorm
      or optimizer.clipvalue or optimizer.global_clipnorm
      or getattr(optimizer, "gradient_accumulation_steps", None)
      or getattr(optimizer, "loss_scale_factor", None) is not None):
    return None
  if any(name in vars(optimizer) for name in _SWAPPED):
    return None  # Swapped already: someone else is building a step.
  if (tf.distribute.has_strategy() or tf.config.list_physical_devices("GPU")
      or control_flow_util.GraphOrParentsInXlaContext(
          tf.compat.v1.get_default_graph())):
    return None
  library = _native.library()
  return None if library is None else FusedKerasAdam(optimizer, library)


_SWAPPED = ("update_step", "_apply_weight_decay")


class FusedKerasAdam:
  """Updates chosen variables of one step with the compiled kernel."""

  def __init__(self, optimizer: Any, library: Any):
    self.optimizer, self.library = optimizer, library
    # tf.Variable ref -> (Keras variable, bool mask).
    self.taken: Dict[Any, Tuple[Any, tf.Tensor]] = {}

  def takes(self, grad: Any, variable: Any, selection: Any) -> bool:
    """Whether the kernel updates `variable`; if so, it will in `run`."""
    if (not isinstance(_variables.storage(variable), tf.Variable)
        or getattr(variable, "constraint", None) is not None
        or getattr(variable, "overwrite_with_gradient", False)):
      return False
    frozen = _fused_adam.kernel_mask(grad, variable, selection)
    if frozen is None:
      return False
    self.taken[_variables.storage(variable).ref()] = (variable, frozen)
    return True

  def run(self, build: Callable[[], Any]) -> Any:
    """`build()` (the optimizer's `apply`), with the kernel updating the
    variables `takes` accepted, weight decay included."""
    optimizer = self.optimizer
    update_step, decay = optimizer.update_step, optimizer._apply_weight_decay

    def apply_weight_decay(variables):
      return decay([v for v in variables
                    if _variables.storage(v).ref() not in self.taken])

    optimizer.update_step = self._update_step(update_step)
    optimizer._apply_weight_decay = apply_weight_decay
    try:
      return build()
    finally:
      for name in _SWAPPED:
        vars(optimizer).pop(name, None)

  def _update_step(self, original):
    optimizer = self.optimizer

    def update_step(gradient, variable, learning_rate):
      taken = self.taken.get(_variables.storage(variable).ref())
      if taken is None:
        return original(gradient, variable, learning_rate)
      keras_variable, frozen = taken
      dtype = tf.as_dtype(keras_variable.dtype)
      # As Adam.update_step computes them.
      lr = tf.cast(learning_rate, dtype)
      local_step = tf.cast(optimizer.iterations + 1, dtype)
      beta_1_power = tf.pow(tf.cast(optimizer.beta_1, dtype), local_step)
      beta_2_power = tf.pow(tf.cast(optimizer.beta_2, dtype), local_step)
      alpha = lr * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power)
      index = optimizer._get_variable_index(keras_variable)
      m = _variables.storage(optimizer._momentums[index])
      v = _variables.storage(optimizer._velocities[index])
      # As _apply_weight_decay computes them; its learning rate is
      # `optimizer.learning_rate`, the one apply passes in as
      # `learning_rate`.
      decay = (optimizer.weight_decay is not None
               and optimizer._use_weight_decay(keras_variable))
      weight_decay = tf.cast(optimizer.weight_decay or 0.0, dtype)
      return self.library.tfpartial_resource_apply_keras_adam(
          _variables.storage(keras_variable).handle, m.handle, v.handle,
          alpha, tf.constant(1 - optimizer.beta_1, dtype),
          tf.constant(1 - optimizer.beta_2, dtype),
          tf.constant(optimizer.epsilon, dtype), weight_decay, lr,
          gradient, frozen, decay=decay)

    return update_step
