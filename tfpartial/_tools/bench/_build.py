"""Bench row (n): what a model costs before its first step has run.

The time to build the TF1 train op (`minimize`, not the spec) for a
ResNet50 with part of every kernel frozen, and for one large variable;
and the time of the first `tf.function` step (trace, optimizer state,
run) for the 50-layer stack of (j) and the ResNet50. Plain and tfpartial
build in turn, in alternating order, a few times; a warm-up with a tiny
model first pays for what any first build in a process pays once.

ResNet50 is `applications.ResNet50(weights=None, input_shape=(64, 64,
3))`: Keras 3's in a `tf.function`; in a TF1 graph, Keras 2's (`tf_keras`,
or `keras` up to TensorFlow 2.15), as Keras 3 does not build in a TF1
graph. Without Keras 2 those rows are left out, with a note.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, List, Optional, TextIO, Tuple

import numpy as np
import tensorflow as tf

from tfpartial._api import _spec
from tfpartial._frozen import _compat
from tfpartial._frozen._types import Variable
from tfpartial._tools.bench import _measure
from tfpartial._tools.bench._steps import dense_stack
from tfpartial._tools.bench._steps import first_columns
from tfpartial._tools.bench._steps import keras_dense_model
from tfpartial._tools.bench._steps import StackSizes

# The seconds of each repeat, plain and tfpartial, and their ratios.
Timings = Tuple[List[float], List[float], List[float]]
# Makes a model in the default graph: its variables and its loss.
GraphModel = Callable[[], Tuple[List[Variable], tf.Tensor]]
# Makes a Keras model and inputs for it.
KerasModel = Callable[[], Tuple[Any, np.ndarray]]


def _keras2() -> Any:
  """Keras 2, which builds in a TF1 graph, or None."""
  if not _compat.KERAS_3:
    import keras  # pylint: disable=g-import-not-at-top
    return keras
  try:
    import tf_keras  # pylint: disable=g-import-not-at-top
  except ImportError:
    return None
  return tf_keras


def _convnet(keras: Any, quick: bool) -> Any:
  if quick:
    return keras.Sequential([
        keras.Input((8, 8, 3)), keras.layers.Conv2D(4, 3, activation="relu"),
        keras.layers.Flatten(), keras.layers.Dense(10)])
  return keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3))


def _images(model: Any, batch: int = 16) -> np.ndarray:
  shape = [batch] + list(model.input_shape[1:])
  return np.random.default_rng(0).random(shape, dtype=np.float32)


def _alternating(repeats: int, plain: Callable[[int], float],
                 partial: Callable[[int], float]) -> Timings:
  """`repeats` pairs of seconds, the order alternating; `plain(repeat)`
  and `partial(repeat)` each build and return the seconds they took."""
  plains: List[float] = []
  partials: List[float] = []
  for repeat in range(repeats):
    if repeat % 2 == 0:
      plains.append(plain(repeat))
      partials.append(partial(repeat))
    else:
      partials.append(partial(repeat))
      plains.append(plain(repeat))
  return plains, partials, [b / a for a, b in zip(plains, partials)]


def _tf1_minimize(make_model: GraphModel, make_optimizer: Callable[[], Any],
                  repeats: int) -> Timings:
  """Seconds for `minimize` in a TF1 graph, plain and with every kernel's
  first output channel frozen; one graph per repeat, both in it."""
  graphs: List[Tuple[Any, List[Variable], tf.Tensor, _spec.FreezeSpec]] = []

  def setup() -> None:
    graph = tf.Graph()
    with graph.as_default():
      variables, loss = make_model()
      spec = first_columns(variables)
    graphs.append((graph, variables, loss, spec))

  def timed(partial: bool) -> Callable[[int], float]:
    def build(repeat: int) -> float:
      while len(graphs) <= repeat:
        setup()
      graph, variables, loss, spec = graphs[repeat]
      with graph.as_default():
        optimizer = make_optimizer()
        start = time.perf_counter()
        if partial:
          spec.minimize(optimizer, loss, var_list=variables)
        else:
          optimizer.minimize(loss, var_list=variables)
        return time.perf_counter() - start
    return build

  return _alternating(repeats, timed(False), timed(True))


def _first_step(make_model: KerasModel, make_optimizer: Callable[[], Any],
                repeats: int) -> Timings:
  """Seconds for the first call of a `tf.function` step (trace, optimizer
  state, run), plain and with every kernel's first column frozen."""
  models: List[Tuple[Any, np.ndarray]] = []

  def timed(partial: bool) -> Callable[[int], float]:
    def first(repeat: int) -> float:
      while len(models) <= repeat:
        models.append(make_model())
      model, inputs = models[repeat]
      variables = model.trainable_variables
      spec = first_columns(variables)
      optimizer = make_optimizer()

      @_measure.function()
      def step() -> tf.Tensor:
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(model(inputs, training=True)))
        grads = tape.gradient(loss, variables)
        if partial:
          spec.apply_gradients(optimizer, zip(grads, variables))
        else:
          optimizer.apply_gradients(zip(grads, variables))
        return loss

      start = time.perf_counter()
      step().numpy()
      return time.perf_counter() - start
    return first

  return _alternating(repeats, timed(False), timed(True))


# A row of (n): label, measure (given the repeats), target, largest ratio.
Build = Tuple[str, Callable[[int], Timings], str, Optional[float]]


def _keras2_net(keras2: Any, tiny: bool,
                batch: int = 16) -> Tuple[List[Variable], tf.Tensor]:
  model = _convnet(keras2, tiny)
  outputs = model(tf.constant(_images(model, batch)), training=True)
  return model.trainable_weights, tf.reduce_mean(tf.square(outputs))


def _one_variable(elements: int) -> Tuple[List[Variable], tf.Tensor]:
  variable = tf.compat.v1.Variable(tf.zeros([elements // 1000, 1000]))
  return [variable], tf.reduce_sum(tf.square(variable))


def _keras_stack(keras: Any, sizes: StackSizes) -> Tuple[Any, np.ndarray]:
  kernels, biases, inputs, _ = dense_stack(**sizes)
  return keras_dense_model(keras, kernels, biases), inputs


def _keras_net(keras: Any, tiny: bool) -> Tuple[Any, np.ndarray]:
  model = _convnet(keras, tiny)
  return model, _images(model)


def _builds(quick: bool, keras: Any,
            keras2: Any) -> Tuple[List[Build], Callable[[], None]]:
  """The rows of (n), and what warms a process up for them."""
  resnet = "tiny conv net" if quick else "ResNet50 (64x64)"
  stack = (StackSizes(layers=2, width=16, batch=8) if quick
           else StackSizes(layers=50, width=128, batch=128))
  elements = 10_000 if quick else 10_000_000
  keras2_net = functools.partial(_keras2_net, keras2, quick)
  one_variable = functools.partial(_one_variable, elements)
  keras_stack = functools.partial(_keras_stack, keras, stack)
  keras_net = functools.partial(_keras_net, keras, quick)
  momentum = lambda: tf.compat.v1.train.MomentumOptimizer(0.01, 0.9)
  adam = lambda: tf.compat.v1.train.AdamOptimizer(1e-3)
  sgd = lambda: keras.optimizers.SGD(0.01, momentum=0.9)
  frozen = "first output channel of every kernel frozen"
  builds: List[Build] = []
  if keras2 is not None:
    builds += [
        (f"TF1 train op build, {resnet} (Keras 2), {frozen}, v1 Momentum",
         lambda r: _tf1_minimize(keras2_net, momentum, r), "<= 1.5", 1.5),
        (f"TF1 train op build, {resnet} (Keras 2), {frozen}, v1 Adam",
         lambda r: _tf1_minimize(keras2_net, adam, r), "<= 1.5", 1.5)]
  builds += [
      # First column of a [rows, 1000] variable: an element mask.
      (f"TF1 train op build, one variable of {elements / 1e6:g}M elements, "
       "its first column frozen (an element mask), v1 Momentum",
       lambda r: _tf1_minimize(one_variable, momentum, r),
       "O(1) Python per variable", None),
      (f"first step (trace + run), tf.function, {stack['layers']} "
       f"Dense({stack['width']}) layers, {frozen}, Keras SGD momentum",
       lambda r: _first_step(keras_stack, sgd, r), "<= 1.2", 1.2),
      (f"first step (trace + run), tf.function, {resnet}, {frozen}, "
       "Keras SGD momentum",
       lambda r: _first_step(keras_net, sgd, r), "<= 1.2", 1.2)]

  def warm_up() -> None:
    # Tiny versions pay what a process's first build pays.
    _first_step(functools.partial(
        _keras_stack, keras, StackSizes(layers=2, width=8, batch=4)), sgd, 2)
    if keras2 is not None:
      for optimizer in (momentum, adam):
        _tf1_minimize(functools.partial(_keras2_net, keras2, True, 2),
                      optimizer, 2)

  return builds, warm_up


def rows(quick: bool, progress: TextIO) -> List[_measure.Result]:
  """(n): TF1 train-op builds and first tf.function steps, in seconds."""
  import keras  # pylint: disable=g-import-not-at-top
  keras2 = _keras2()
  repeats = 1 if quick else 3
  builds, warm_up = _builds(quick, keras, keras2)
  logger = tf.get_logger()
  level = logger.level
  # Each first step is a new tf.function, which TensorFlow warns of.
  logger.setLevel("ERROR")
  try:
    if not quick:
      _measure.show(progress, "(n) warming up")
      warm_up()
    results = []
    for label, measure, target, limit in builds:
      _measure.show(progress, f"(n) {label}")
      plains, partials, ratios = measure(repeats)
      results.append(_measure.repeated(
          f"(n) {label}", plains, partials, ratios, "s", target, limit))
  finally:
    logger.setLevel(level)
  _measure.show(progress, "")
  if keras2 is None:
    print("(n) the TF1 ResNet50 rows need Keras 2 (pip install tf_keras), "
          "and were left out", file=progress)
  return results
