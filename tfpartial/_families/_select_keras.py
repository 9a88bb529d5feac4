"""Keras 3's Adam, AdamW and SGD eagerly without a kernel: the select update.

Where no compiled kernel serves an eager step (no compiler,
`TFPARTIAL_KERNELS=off`, a GPU), the unfused step would snapshot the
variable, let Keras update it in place (which copies it, since the
snapshot shares its buffer), and select the frozen values back: an eager
step held the masked gradient and that copy above plain Keras (bench row
(m); docs/performance.md, "Memory"). The select update is Keras' own ops, in
its order, on the gradient masked here, with the variable written once,
as a select of its values before and after them: the unfused step's bits
in the variable and the slots, no copy, and the masked gradient let go
before the variable's update, where Keras' temporaries peak. An eager step
then holds no more than plain Keras' but the mask.

Only eagerly (in a `tf.function` the executor frees what a step no longer
needs itself, and Grappler may rewrite these ops and Keras' differently),
outside `tf.distribute`, with Keras' plain settings (`plain_settings`),
for a dense gradient of a variable without a constraint. It reads the
variable before writing it, as a restore does, so the step holds the step
lock (`_fused.FusedStep.needs_lock`). `plain_settings` and
`weight_decay_of` serve the compiled kernels' updates too (`_fused_keras`).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Tuple

import tensorflow as tf

from tfpartial._frozen import _tensors
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Gradient, Mode, Optimizer, Variable
from tfpartial._step import _mask


def plain_settings(optimizer: Optimizer) -> bool:
  """No clipping, loss scaling, gradient accumulation, EMA or AMSGrad: the
  settings under which Keras' step is its `update_step` alone."""
  options: Any = optimizer  # A Keras 3 optimizer: its settings.
  return not (getattr(options, "amsgrad", False) or options.use_ema
              or options.clipnorm or options.clipvalue
              or options.global_clipnorm
              or getattr(options, "gradient_accumulation_steps", None)
              or getattr(options, "loss_scale_factor", None) is not None)


def weight_decay_of(optimizer: Any, keras_variable: Variable,
                    dtype: tf.DType) -> Tuple[bool, tf.Tensor]:
  """(whether Keras decays the variable, the decay) as _apply_weight_decay
  computes them; its learning rate is `optimizer.learning_rate`, the one
  apply passes in as `learning_rate`."""
  decay = (optimizer.weight_decay is not None
           and optimizer._use_weight_decay(keras_variable))
  return decay, tf.cast(optimizer.weight_decay or 0.0, dtype)


def serves(optimizer: Optimizer, mode: Mode) -> bool:
  """The select update serves eager steps only, on any device: in a
  function the graph's executor frees what a step no longer needs itself,
  and Grappler may rewrite Keras' ops and these differently."""
  return (mode is Mode.EAGER and tf.executing_eagerly()
          and plain_settings(optimizer) and not tf.distribute.has_strategy())


def select_mask(grad: Gradient, variable: Variable,
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
  mask = _tensors.frozen_mask_tensor(selection)
  rows = [shape[0]] + [1] * (shape.rank - 1) if shape.rank else []
  if mask.shape not in (shape, tf.TensorShape(rows)):
    return None
  return mask


class _Opened(NamedTuple):
  """What a select update reads of its variable, as Keras casts it."""

  ops: Any  # keras.ops
  keras_variable: Variable
  variable: tf.Variable  # Its storage: what the update reads and writes.
  frozen: tf.Tensor
  dtype: tf.dtypes.DType
  lr: Any


def _open(gradient: Any, taken: Tuple[Variable, tf.Tensor],
          learning_rate: Any) -> Tuple[_Opened, tf.Tensor]:
  """The opening of both select updates: the variable, its frozen mask, the
  learning rate and the masked gradient, cast to the variable's dtype in
  the order Keras' update_step casts them."""
  import keras  # pylint: disable=g-import-not-at-top
  keras_variable, frozen = taken
  dtype = tf.as_dtype(keras_variable.dtype)
  lr = keras.ops.cast(learning_rate, dtype)
  masked = _mask.zero_where(frozen, keras.ops.cast(gradient, dtype))
  return _Opened(keras.ops, keras_variable, _variables.storage(keras_variable),
                 frozen, dtype, lr), masked


def adam_update(optimizer: Any, gradient: Any,
                taken: Tuple[Variable, tf.Tensor],
                learning_rate: Any) -> Any:
  """Keras' Adam (and AdamW's weight decay) op for op, as the unfused step
  runs them on the masked gradient, but the variable is written once, as
  a select of its value before and after: no snapshot kept across the
  update (whose copy-on-write copies the variable), no restore, and the
  masked gradient is let go before the variable's update, where Keras'
  temporaries peak."""
  # Adam.update_step's ops, in its order.
  opened, masked = _open(gradient, taken, learning_rate)
  del gradient  # The caller's is the caller's; this frame lets it go.
  ops, keras_variable, variable, frozen, dtype, lr = opened
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
  decay_it, weight_decay = weight_decay_of(optimizer, keras_variable, dtype)
  if decay_it:  # _apply_weight_decay's `variable -= variable * wd * lr`.
    new = tf.subtract(tf.subtract(before, before * weight_decay * lr), step)
  else:
    new = tf.subtract(before, step)
  del step
  kept = _tensors.select(frozen, before, new)
  del new, before
  return variable.assign(kept, read_value=False)


def sgd_update(optimizer: Any, gradient: Any,
               taken: Tuple[Variable, tf.Tensor],
               learning_rate: Any) -> Any:
  """Keras' SGD (plain, momentum, Nesterov; weight decay) op for op, as
  `adam_update` does Adam's: the masked gradient goes once scaled by the
  learning rate, before the temporaries of the momentum's update."""
  # SGD.update_step's ops, in its order.
  opened, masked = _open(gradient, taken, learning_rate)
  del gradient
  ops, keras_variable, variable, frozen, dtype, lr = opened
  scaled = ops.multiply(masked, lr)  # Nesterov's second product is the same.
  del masked
  if optimizer.momentum != 0:
    m = optimizer.momentums[optimizer._get_variable_index(keras_variable)]
    momentum = ops.cast(optimizer.momentum, dtype)
    optimizer.assign(m, ops.subtract(ops.multiply(m, momentum), scaled))
    step = (ops.subtract(ops.multiply(m, momentum), scaled)
            if optimizer.nesterov else tf.convert_to_tensor(m))
    del scaled
    add = True
  else:
    step, add = scaled, False
    del scaled
  before = variable.read_value()
  decay_it, weight_decay = weight_decay_of(optimizer, keras_variable, dtype)
  decayed = (tf.subtract(before, before * weight_decay * lr) if decay_it
             else before)
  new = tf.add(decayed, step) if add else tf.subtract(decayed, step)
  del step, decayed
  kept = _tensors.select(frozen, before, new)
  del new, before
  return variable.assign(kept, read_value=False)
