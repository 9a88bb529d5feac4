"""The problem of problems.py as Keras models, and the Keras optimizers.

`PartialModel` holds x, b, c as Keras weights; `SplitModel` is the
split-variable reference: the trainable elements of x in their own weight
`t`, the frozen ones and b as non-trainable constants.
"""

from __future__ import annotations

from typing import Callable, Dict

import keras
import numpy as np
import tensorflow as tf

import problems
from problems import B0, C0, W, X0, X_FROZEN, Y

K = keras.optimizers

# name -> factory. Element-wise optimizers follow the split reference.
ELEMENTWISE: Dict[str, Callable] = {
    "SGD": lambda: K.SGD(0.05),
    "SGD_momentum_nesterov_decay": lambda: K.SGD(
        0.05, momentum=0.9, nesterov=True, weight_decay=0.1),
    "Adam_amsgrad": lambda: K.Adam(0.05, amsgrad=True),
    "AdamW": lambda: K.AdamW(0.05, weight_decay=0.2),
    "Adamax": lambda: K.Adamax(0.05),
    "Nadam": lambda: K.Nadam(0.05),
    "RMSprop_centered": lambda: K.RMSprop(0.01, momentum=0.5, centered=True),
    "Adagrad": lambda: K.Adagrad(0.1),
    "Adadelta": lambda: K.Adadelta(1.0),
    "Ftrl_shrinkage": lambda: K.Ftrl(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.05,
        l2_shrinkage_regularization_strength=0.1),
    "Lion": lambda: K.Lion(0.01, weight_decay=0.1),
    "ScheduleFreeAdamW": lambda: K.ScheduleFreeAdamW(0.05, weight_decay=0.1),
    "Adam_clipnorm": lambda: K.Adam(0.05, clipnorm=0.5),
    "Adam_clipvalue": lambda: K.Adam(0.05, clipvalue=0.3),
    "Adam_global_clipnorm": lambda: K.Adam(0.05, global_clipnorm=0.5),
    "AdamW_ema_overwrite": lambda: K.AdamW(
        0.05, weight_decay=0.2, use_ema=True, ema_momentum=0.5,
        ema_overwrite_frequency=2),
    "Adam_accumulate2": lambda: K.Adam(0.05, gradient_accumulation_steps=2),
    "LossScale_Adam": lambda: K.LossScaleOptimizer(K.Adam(0.05)),
    "Multi_Adam_SGD": lambda: _multi(),
}
# Keras' Adam and AdamW as the compiled kernel and the select update take
# them: weight decay, a variable excluded from it, a schedule.
ADAM_FAMILY: Dict[str, Callable] = {
    "Adam": lambda: K.Adam(0.05),
    "AdamW": lambda: K.AdamW(0.05, weight_decay=0.2),
    "AdamW_excluding_c": lambda: _excluding_c(K.AdamW(0.05, weight_decay=0.2)),
    "AdamW_schedule": lambda: K.AdamW(
        keras.optimizers.schedules.ExponentialDecay(0.05, 1, 0.5),
        weight_decay=0.2),
}


def _excluding_c(optimizer):
  optimizer.exclude_from_weight_decay(var_names=["c"])
  return optimizer


class SubclassedAdam(K.Adam):
  """A subclass of Adam: it may update differently, so no fast path."""


# Settings (or classes) under which neither the compiled kernel nor the
# select update serves a Keras Adam step; `adam_for(case)` makes one.
UNSERVED_ADAM: Dict[str, Callable] = {
    "clipnorm": lambda: K.Adam(0.1, clipnorm=1.0),
    "amsgrad": lambda: K.Adam(0.1, amsgrad=True),
    "ema": lambda: K.Adam(0.1, use_ema=True),
    "subclass": lambda: SubclassedAdam(0.1),
    "accumulation": lambda: K.Adam(0.1, gradient_accumulation_steps=2),
    "rmsprop": lambda: K.RMSprop(0.1),  # No kernel yet.
}


def adam_for(case):
  """The optimizer of an `UNSERVED_ADAM` case; plain Adam for the others."""
  return UNSERVED_ADAM.get(case, lambda: K.Adam(0.1))()


# Optimizers that mix the elements of a variable: the frozen elements count
# as constants with a zero gradient.
MIXING: Dict[str, Callable] = {
    "Lamb": lambda: K.Lamb(0.05),
    "Adafactor": lambda: K.Adafactor(0.05),
    "Muon": lambda: K.Muon(0.05),
}


def _multi():
  from keras.src.optimizers.multi_optimizer import MultiOptimizer  # pylint: disable=g-import-not-at-top
  from keras.src.optimizers.multi_optimizer import OptimizerMap  # pylint: disable=g-import-not-at-top
  optimizers = OptimizerMap(default_optimizer=K.SGD(0.05, momentum=0.9))
  optimizers[".*/c"] = K.Adam(0.05)
  return MultiOptimizer(optimizers)


def _constant(value):
  return keras.initializers.Constant(np.asarray(value))


class PartialModel(keras.Model):
  """x, b, c as weights; the output's squared sum is the problem's loss."""

  def __init__(self, poison=True, **kwargs):
    super().__init__(**kwargs)
    self.poison = poison
    self.x = self.add_weight(shape=X0.shape, initializer=_constant(X0), name="x")
    self.b = self.add_weight(shape=B0.shape, initializer=_constant(B0), name="b")
    self.c = self.add_weight(shape=C0.shape, initializer=_constant(C0), name="c")

  def call(self, inputs):
    x, b = tf.convert_to_tensor(self.x), tf.convert_to_tensor(self.b)
    if self.poison:
      x = problems.poisoned(x, X_FROZEN)
      b = problems.poisoned(b, np.ones(B0.shape, bool))
    residual = tf.matmul(x * self.c, W) + b - Y
    return tf.reshape(residual, [1, -1]) + 0.0 * inputs

  def spec(self):
    import tfpartial  # pylint: disable=g-import-not-at-top
    return (tfpartial.freeze(self.x, np.s_[0, :2])
            | tfpartial.freeze(self.x, ([1, 2], [3, 0]))
            | tfpartial.freeze(self.b))

  def values(self):
    return {"x": self.x.numpy(), "b": self.b.numpy(), "c": self.c.numpy()}


class SplitModel(keras.Model):
  """The split reference: only x's trainable elements are a weight."""

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.t = self.add_weight(shape=(int((~X_FROZEN).sum()),),
                             initializer=_constant(X0[~X_FROZEN]), name="t")
    self.x_frozen = self.add_weight(shape=X0.shape, initializer=_constant(X0),
                                    name="x_frozen", trainable=False)
    self.b = self.add_weight(shape=B0.shape, initializer=_constant(B0),
                             name="b_frozen", trainable=False)
    self.c = self.add_weight(shape=C0.shape, initializer=_constant(C0), name="c")

  def call(self, inputs):
    x = tf.tensor_scatter_nd_update(tf.convert_to_tensor(self.x_frozen),
                                    np.argwhere(~X_FROZEN), self.t)
    residual = tf.matmul(x * self.c, W) + self.b - Y
    return tf.reshape(residual, [1, -1]) + 0.0 * inputs

  def values(self):
    return {"t": self.t.numpy(), "c": self.c.numpy()}


INPUTS = np.ones((1, 1), np.float32)
TARGETS = np.zeros((1, 6), np.float32)


def squared_sum(y_true, y_pred):
  return tf.reduce_sum(tf.square(y_pred - y_true), axis=-1)


def loss_of(model):
  return tf.reduce_sum(squared_sum(TARGETS, model(INPUTS)))


def train(model, optimizer, spec, mode, steps=4, between=None, applied=None):
  """Trains `model` in `mode` (a `helpers.KerasMode`); the values after
  each step. `applied`, a list, gets the optimizer that applies the
  gradients (the wrapped one where `mode` wraps)."""
  variables = model.trainable_variables
  if mode.fit:
    trajectory = []
    record = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: trajectory.append(model.values()))
    callbacks = [record]
    if between is not None:
      callbacks.insert(0, keras.callbacks.LambdaCallback(
          on_train_batch_begin=lambda batch, logs: between(batch)))
    model.compile(optimizer=spec.wrap(optimizer) if spec else optimizer,
                  loss=squared_sum)
    if applied is not None:
      applied.append(model.optimizer)
    model.fit(np.repeat(INPUTS, steps, 0), np.repeat(TARGETS, steps, 0),
              batch_size=1, epochs=1, shuffle=False, verbose=0,
              callbacks=callbacks)
    return trajectory
  if spec is None:
    apply = optimizer.apply_gradients
  elif mode.wrap:
    wrapped = spec.wrap(optimizer)
    apply = wrapped.apply_gradients
  else:
    apply = lambda pairs: spec.apply_gradients(optimizer, pairs)
  if applied is not None:
    applied.append(wrapped if spec is not None and mode.wrap else optimizer)

  def step():
    with tf.GradientTape() as tape:
      loss = optimizer.scale_loss(loss_of(model))
    grads = tape.gradient(loss, variables)
    apply(list(zip(grads, variables)))

  step = mode.compiled(step)
  trajectory = []
  for index in range(steps):
    if between is not None:
      between(index)
    step()
    trajectory.append(model.values())
  return trajectory
