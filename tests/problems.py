"""A small training problem, the optimizers under test, and the oracle.

The oracle for "trains correctly" is the split-variable reference: a
separate variable holding only the trainable elements of `x`, the frozen
ones as constants, trained with the same optimizer. It shares no code with
tfpartial.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict

import numpy as np
import tensorflow as tf

import tfpartial

V1 = tf.compat.v1.train

# name -> factory(global_step) -> optimizer. Settings chosen so that every
# regulariser moves weights whose gradient is zero.
V1_OPTIMIZERS: Dict[str, Callable] = {
    "GradientDescent": lambda gs: V1.GradientDescentOptimizer(0.05),
    "Momentum": lambda gs: V1.MomentumOptimizer(0.05, momentum=0.9),
    "Momentum_nesterov": lambda gs: V1.MomentumOptimizer(
        0.05, momentum=0.9, use_nesterov=True),
    "Adam": lambda gs: V1.AdamOptimizer(0.05),
    "Adagrad": lambda gs: V1.AdagradOptimizer(0.1),
    "Adadelta": lambda gs: V1.AdadeltaOptimizer(1.0),
    "RMSProp": lambda gs: V1.RMSPropOptimizer(0.01),
    "RMSProp_centered_momentum": lambda gs: V1.RMSPropOptimizer(
        0.01, momentum=0.5, centered=True),
    "Ftrl_l1_l2": lambda gs: V1.FtrlOptimizer(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.05),
    "Ftrl_shrinkage": lambda gs: V1.FtrlOptimizer(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.05,
        l2_shrinkage_regularization_strength=0.1),
    "ProximalGradientDescent": lambda gs: V1.ProximalGradientDescentOptimizer(
        0.05, l1_regularization_strength=0.05, l2_regularization_strength=0.05),
    "ProximalAdagrad": lambda gs: V1.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.05),
    "AdagradDA": lambda gs: V1.AdagradDAOptimizer(
        0.1, global_step=gs, l1_regularization_strength=0.05,
        l2_regularization_strength=0.05),
}

_RNG = np.random.default_rng(20261129)
X0 = _RNG.normal(size=(3, 4)).astype(np.float32)
B0 = _RNG.normal(size=(2,)).astype(np.float32)
C0 = (1.0 + 0.1 * _RNG.normal(size=(4,))).astype(np.float32)
W = _RNG.normal(size=(4, 2)).astype(np.float32)
Y = _RNG.normal(size=(3, 2)).astype(np.float32)

# x: a slice, two scattered elements; b: whole; c: not in the spec.
X_FROZEN = np.zeros((3, 4), dtype=bool)
X_FROZEN[0, :2] = True
X_FROZEN[[1, 2], [3, 0]] = True
# What the frozen gradients are replaced with, in order.
POISON = np.array([np.inf, np.nan, -np.inf, np.nan], dtype=np.float32)


def loss(x, b, c):
  return tf.reduce_sum(tf.square(tf.matmul(x * c, W) + b - Y))


def poisoned(x, frozen: np.ndarray):
  """`x`, but the gradient flowing back is Inf/NaN where `frozen`."""

  @tf.custom_gradient
  def identity(value):
    def grad(upstream):
      bad = np.zeros(frozen.shape, dtype=np.float32)
      bad[frozen] = np.resize(POISON, int(frozen.sum()))
      return tf.where(frozen, bad, upstream)

    return tf.identity(value), grad

  return identity(x)


@dataclasses.dataclass
class Model:
  """The variables of the problem, built by a runner."""

  x: tf.Variable
  b: tf.Variable
  c: tf.Variable
  global_step: tf.Variable

  @classmethod
  def build(cls, runner) -> "Model":
    return cls(runner.variable(X0, "x"), runner.variable(B0, "b"),
               runner.variable(C0, "c"),
               runner.variable(0, "global_step", dtype=tf.int64,
                               trainable=False))

  @property
  def variables(self):
    return [self.x, self.b, self.c]

  def spec(self) -> tfpartial.FreezeSpec:
    return (tfpartial.freeze(self.x, np.s_[0, :2])
            | tfpartial.freeze(self.x, ([1, 2], [3, 0]))
            | tfpartial.freeze(self.b))

  def loss(self, poison: bool = True):
    x, b = self.x, self.b
    if poison:
      x = poisoned(x, X_FROZEN)
      b = poisoned(b, np.ones(B0.shape, dtype=bool))
    return loss(x, b, self.c)


def steps_for(entry: str, runner, spec, optimizer, model: Model):
  """The step `entry` builds: the public ways to train under a spec."""
  return entry_step(entry, runner, spec, optimizer, model.loss,
                    model.variables, model.global_step)


def entry_step(entry: str, runner, spec, optimizer, loss_fn, variables,
               global_step):
  """The step `entry` builds for `loss_fn` (a zero-argument callable) of
  `variables`."""
  gs = {"global_step": global_step}

  def apply_gradients():
    grads = runner.gradients(loss_fn, variables)
    return spec.apply_gradients(optimizer, zip(grads, variables), **gs)

  def minimize():
    return spec.minimize(optimizer, runner.loss(loss_fn), var_list=variables,
                         **gs)

  def wrap_minimize():
    return spec.wrap(optimizer).minimize(runner.loss(loss_fn),
                                         var_list=variables, **gs)

  def wrap_compute_apply():
    wrapped = spec.wrap(optimizer)
    pairs = wrapped.compute_gradients(runner.loss(loss_fn),
                                      var_list=variables)
    return wrapped.apply_gradients(pairs, **gs)

  return {"apply_gradients": apply_gradients, "minimize": minimize,
          "wrap_minimize": wrap_minimize,
          "wrap_compute_apply": wrap_compute_apply}[entry]


ENTRIES = ("apply_gradients", "minimize", "wrap_minimize", "wrap_compute_apply")


def split_reference(runner, make_optimizer, steps: int):
  """Trains only the trainable elements of x (and all of c), split apart.

  Returns the trajectory: after each step, (x trainable values, c).
  """
  trainable = np.argwhere(~X_FROZEN)
  # Constants held in variables, as in the model: a TF1 graph would fold
  # tf.constant ones together and round differently.
  x_frozen = runner.variable(X0, "x_frozen", trainable=False)
  b_frozen = runner.variable(B0, "b_frozen", trainable=False)
  t = runner.variable(X0[~X_FROZEN], "t")
  c = runner.variable(C0, "c_reference")
  gs = runner.variable(0, "global_step_reference", dtype=tf.int64,
                       trainable=False)
  optimizer = make_optimizer(gs)

  def split_loss():
    x = tf.tensor_scatter_nd_update(x_frozen, trainable, t)
    return loss(x, b_frozen, c)

  def step():
    # Every gradient before any update: TF1 ref variables have no snapshot
    # reads (tfpartial's graph step waits the same way).
    grads = runner.gradients(split_loss, [t, c])
    if runner.graph:
      grads = tf.tuple(grads)
    return optimizer.apply_gradients(zip(grads, [t, c]), global_step=gs)

  run = runner.step(step)
  trajectory = []
  for _ in range(steps):
    run()
    trajectory.append((runner.value(t), runner.value(c)))
  return trajectory
