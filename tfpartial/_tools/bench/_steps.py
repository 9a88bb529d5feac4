"""Bench rows (j) and (k): many small variables, and mostly frozen ones.

(j) is the model where tfpartial's cost per variable shows: 50 Dense(128)
layers, the first output column of every kernel frozen, with Keras SGD
with momentum, Adam and AdamW in a `tf.function`, and v1 Momentum in a TF1
graph. (k) is the 4x1024 MLP of (a) with Keras SGD at 1%, 50% and 99.9% of
each kernel frozen: a mostly frozen variable has less to update.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable, List, Tuple, TypedDict

import numpy as np
import tensorflow as tf

from tfpartial._api import _make
from tfpartial._api import _spec
from tfpartial._frozen._types import Variable
from tfpartial._tools.bench import _measure
from tfpartial._tools.bench._cases import forward
from tfpartial._tools.bench._cases import freeze_where
from tfpartial._tools.bench._cases import kernel
from tfpartial._tools.bench._cases import mlp
from tfpartial._tools.bench._cases import MlpSizes
from tfpartial._tools.bench._cases import Step
from tfpartial._tools.bench._measure import Case

# Kernels, biases, inputs, targets of a stack of Dense layers.
Stack = Tuple[List[np.ndarray], List[np.ndarray], np.ndarray, np.ndarray]


class StackSizes(TypedDict):
  """The stack of (j): `layers` Dense(`width`) layers."""

  layers: int
  width: int
  batch: int


def dense_stack(layers: int, width: int, batch: int, seed: int = 0) -> Stack:
  """Kernels and biases of `layers` Dense(`width`) layers, inputs, targets."""
  rng = np.random.default_rng(seed)
  kernels = [rng.normal(0, width ** -0.5, (width, width)).astype(np.float32)
             for _ in range(layers)]
  biases = [np.zeros(width, np.float32) for _ in range(layers)]
  inputs = rng.normal(size=(batch, width)).astype(np.float32)
  targets = rng.normal(size=(batch, width)).astype(np.float32)
  return kernels, biases, inputs, targets


def keras_dense_model(keras: Any, kernels: List[np.ndarray],
                      biases: List[np.ndarray]) -> Any:
  """A Keras Sequential of Dense layers (ReLU), holding these weights."""
  width = kernels[0].shape[0]
  model = keras.Sequential(
      [keras.Input((width,))]
      + [keras.layers.Dense(width, activation="relu") for _ in kernels])
  model.set_weights([w for pair in zip(kernels, biases) for w in pair])
  return model


def first_columns(variables: Iterable[Variable]) -> _spec.FreezeSpec:
  """The first output column (or channel) of every kernel frozen."""
  spec = _spec.FreezeSpec()
  for variable in variables:
    if len(variable.shape) >= 2:
      spec = spec | _make.freeze(variable, np.s_[..., 0])
  return spec


def _keras_stack_case(layers: int, width: int, batch: int,
                      optimizer: str) -> Case:
  """(j) with a Keras optimizer, in a tf.function."""
  import keras  # pylint: disable=g-import-not-at-top
  kernels, biases, inputs, targets = dense_stack(layers, width, batch)
  make = {"SGD momentum": lambda: keras.optimizers.SGD(0.01, momentum=0.9),
          "Adam": lambda: keras.optimizers.Adam(1e-3),
          "AdamW": lambda: keras.optimizers.AdamW(1e-3, weight_decay=0.01)}

  def build(partial: bool) -> Step:
    model = keras_dense_model(keras, kernels, biases)
    variables = model.trainable_variables
    chosen = make[optimizer]()
    spec = first_columns(variables)

    @_measure.function()
    def step() -> tf.Tensor:
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(inputs, training=True)
                                        - targets))
      grads = tape.gradient(loss, variables)
      if partial:
        spec.apply_gradients(chosen, zip(grads, variables))
      else:
        chosen.apply_gradients(zip(grads, variables))
      return loss

    return step

  kernel_note = f", {kernel()}" if optimizer != "SGD momentum" else ""
  return Case(f"(j) {layers} Dense({width}) layers, first column of every "
              f"kernel frozen, batch {batch}, Keras {optimizer}, "
              f"tf.function{kernel_note}",
              build(False), build(True), "<= 1.03", limit=1.03)


def _graph_stack_case(layers: int, width: int, batch: int) -> Case:
  """(j) in a TF1 graph with v1 Momentum."""
  kernels0, biases0, inputs, targets = dense_stack(layers, width, batch)

  def build(partial: bool) -> Step:
    graph = tf.Graph()
    with graph.as_default():
      kernels = [tf.compat.v1.Variable(k) for k in kernels0]
      biases = [tf.compat.v1.Variable(b) for b in biases0]
      hidden = tf.constant(inputs)
      for k, b in zip(kernels, biases):
        hidden = tf.nn.relu(tf.matmul(hidden, k) + b)
      loss = tf.reduce_mean(tf.square(hidden - targets))
      optimizer = tf.compat.v1.train.MomentumOptimizer(0.01, momentum=0.9)
      if partial:
        train_op = first_columns(kernels).minimize(optimizer, loss)
      else:
        train_op = optimizer.minimize(loss)
      session = tf.compat.v1.Session(graph=graph)
      session.run(tf.compat.v1.global_variables_initializer())
    return lambda: session.run(train_op)

  return Case(f"(j) {layers} Dense({width}) layers, first column of every "
              f"kernel frozen, batch {batch}, TF1 graph, v1 Momentum",
              build(False), build(True), "<= 1.03", limit=1.03)


def _mostly_frozen_case(width: int, layers: int, batch: int,
                        frozen: float) -> Case:
  """(k) the MLP of (a) with Keras SGD, `frozen` of each kernel frozen."""
  import keras  # pylint: disable=g-import-not-at-top
  kernels0, masks, inputs, targets = mlp(width, layers, batch, frozen=frozen)

  def build(partial: bool) -> Step:
    kernels = [tf.Variable(k) for k in kernels0]
    optimizer = keras.optimizers.SGD(0.01)
    spec = freeze_where(kernels, masks)

    @_measure.function()
    def step() -> tf.Tensor:
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(forward(kernels, inputs) - targets))
      grads = tape.gradient(loss, kernels)
      if partial:
        spec.apply_gradients(optimizer, zip(grads, kernels))
      else:
        optimizer.apply_gradients(zip(grads, kernels))
      return loss

    return step

  # Mostly frozen, there is less to update: the step should cost less.
  limit = 1.0 if frozen > 0.5 else 1.01
  return Case(f"(k) MLP {layers}x{width}, {100 * frozen:g}% of each kernel "
              f"frozen, batch {batch}, Keras SGD, tf.function",
              build(False), build(True),
              "< 1.0" if limit == 1.0 else "<= 1.01", limit=limit)


def cases(quick: bool) -> Dict[str, List[Callable[[], Case]]]:
  """(j) and (k), by letter: each a list of rows, built when called."""
  if quick:
    stack = StackSizes(layers=2, width=16, batch=8)
    sizes = MlpSizes(width=64, layers=2, batch=16)
  else:
    stack = StackSizes(layers=50, width=128, batch=128)
    sizes = MlpSizes(width=1024, layers=4, batch=256)
  return {
      "j": [lambda: _keras_stack_case(**stack, optimizer="SGD momentum"),
            lambda: _keras_stack_case(**stack, optimizer="Adam"),
            lambda: _keras_stack_case(**stack, optimizer="AdamW"),
            lambda: _graph_stack_case(**stack)],
      "k": [functools.partial(_mostly_frozen_case, **sizes, frozen=frozen)
            for frozen in (0.01, 0.5, 0.999)],
  }
