"""(o) Sparse fine-tuning: compact element masks against the plain step.

A 10M-element variable (2,500 x 4,000) of which 0.1% to 50% trains, at
scattered positions, with `train_only(w, mask, compact=True)`: the
optimizer step alone (the gradient given) and the whole training step
(forward, gradient, update), Keras Adam in a `tf.function` and v1 Adam in
a TF1 graph. The state compared is the optimizers' own variables.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import tensorflow as tf

from tfpartial._api import _make
from tfpartial._tools.bench import _measure
from tfpartial._tools.bench._cases import state_bytes
from tfpartial._tools.bench._measure import Case

# The variable's shape, the batch of the whole step.
Sizes = Tuple[int, int, int]
FULL: Sizes = (2_500, 4_000, 16)
QUICK: Sizes = (50, 40, 4)
# Trainable fraction -> (optimizer step ratio, whole step ratio) targets, or
# None where a row only reports (docs/performance.md, "Sparse fine-tuning").
TARGETS: Dict[float, Tuple[Optional[float], Optional[float]]] = {
    0.001: (0.5, 1.0), 0.01: (0.5, 1.0), 0.1: (None, None),
    0.05: (None, None), 0.3: (None, None), 0.5: (None, None),
    0.019: (None, None)}
# The fractions of each family's rows: where compact stops paying in each.
KERAS_FRACTIONS = (0.001, 0.01, 0.1, 0.3, 0.5)
V1_FRACTIONS = (0.01, 0.05, 0.1)
# Compact against the default spec at the fractions the compact hint
# recommends it for (`_step/_hint`: under 2% of a large variable).
HINTED_FRACTIONS = (0.01, 0.019)


def problem(sizes: Sizes, fraction: float) -> Tuple[np.ndarray, ...]:
  rows, columns, batch = sizes
  rng = np.random.default_rng(3)
  w0 = rng.normal(0, columns ** -0.5, (rows, columns)).astype(np.float32)
  train = rng.random((rows, columns)) < fraction
  inputs = rng.normal(size=(batch, rows)).astype(np.float32)
  targets = rng.normal(size=(batch, columns)).astype(np.float32)
  grad = rng.normal(size=(rows, columns)).astype(np.float32)
  return w0, train, inputs, targets, grad


# What a side of a row runs: no spec, the compact spec, or the same mask
# without `compact` (the default).
PLAIN, COMPACT, DEFAULT = "plain", "compact", "default"


def _keras_case(sizes: Sizes, fraction: float, whole: bool,
                against: str = PLAIN) -> Case:
  """Keras Adam in a `tf.function`: the optimizer step or the whole step,
  compact against `against`."""
  import keras  # pylint: disable=g-import-not-at-top
  w0, train, inputs, targets, grad0 = problem(sizes, fraction)
  optimizers: Dict[str, Any] = {}

  def build(kind: str) -> Callable[[], Any]:
    w = tf.Variable(w0)
    optimizer = optimizers[kind] = keras.optimizers.Adam(1e-3)
    spec = _make.train_only(w, train, compact=kind == COMPACT)
    grad = tf.constant(grad0)

    @_measure.function()
    def step() -> Any:
      if whole:
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(tf.matmul(inputs, w) - targets))
        pairs = [(tape.gradient(loss, w), w)]
      else:
        pairs = [(grad, w)]
      if kind != PLAIN:
        return spec.apply_gradients(optimizer, pairs)
      return optimizer.apply_gradients(pairs)

    return step

  plain, partial = build(against), build(COMPACT)
  plain(), partial()  # Build the optimizers, for their state sizes.
  return _case("Keras Adam, tf.function", sizes, fraction, whole, plain,
               partial, lambda: (state_bytes(optimizers[COMPACT].variables),
                                 state_bytes(optimizers[against].variables)),
               against)


def _v1_case(sizes: Sizes, fraction: float, whole: bool,
             against: str = PLAIN) -> Case:
  """v1 Adam in a TF1 graph and `Session`: the optimizer step or the whole
  step (`minimize`), compact against `against`."""
  w0, train, inputs, targets, grad0 = problem(sizes, fraction)
  state: Dict[str, int] = {}

  def build(kind: str) -> Callable[[], Any]:
    graph = tf.Graph()
    with graph.as_default():
      w = tf.compat.v1.Variable(w0, use_resource=True)
      optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
      spec = _make.train_only(w, train, compact=kind == COMPACT)
      loss = tf.reduce_mean(tf.square(tf.matmul(inputs, w) - targets))
      if whole:
        train_op = (spec.minimize(optimizer, loss) if kind != PLAIN
                    else optimizer.minimize(loss))
      else:
        # The gradient held in a variable: the step reads it, nothing more.
        grad = tf.compat.v1.Variable(grad0, use_resource=True)
        pairs = [(grad.read_value(), w)]
        train_op = (spec.apply_gradients(optimizer, pairs) if kind != PLAIN
                    else optimizer.apply_gradients(pairs))
      session = tf.compat.v1.Session(graph=graph)
      session.run(tf.compat.v1.global_variables_initializer())
      state[kind] = state_bytes(optimizer.variables())
    return lambda: session.run(train_op)

  plain, partial = build(against), build(COMPACT)
  return _case("v1 Adam, TF1 graph", sizes, fraction, whole, plain, partial,
               lambda: (state[COMPACT], state[against]), against)


def _case(family: str, sizes: Sizes, fraction: float, whole: bool,
          plain: Callable[[], Any], partial: Callable[[], Any],
          state: Callable[[], Tuple[int, int]], against: str) -> Case:
  rows, columns, batch = sizes
  what = (f"whole step, batch {batch}" if whole
          else "optimizer step, gradient given")
  title = (f"(o) {rows * columns / 1e6:g}M elements, {100 * fraction:g}% "
           f"train (scattered), compact, {family}, {what}")
  if against == DEFAULT:
    # Wherever the hint recommends compact, it must cost no more than the
    # same mask without it.
    return Case(f"{title}, against the default spec (no compact)", plain,
                partial, "<= 1", limit=1.0)
  step_limit, whole_limit = TARGETS[fraction]
  limit = whole_limit if whole else step_limit
  target = "reference" if limit is None else (
      f"<= {limit:g}" if whole else f"<= {limit:g}, state <= 2%")
  return Case(title, plain, partial, target, limit=limit, state=state,
              state_limit=0.02 if limit is not None and not whole else None)


def cases(quick: bool) -> Dict[str, List[Callable[[], Case]]]:
  """(o), by letter: its rows, each built when called."""
  sizes = QUICK if quick else FULL
  rows: List[Callable[[], Case]] = []
  for fraction in KERAS_FRACTIONS:
    for whole in (False, True):
      rows.append(functools.partial(_keras_case, sizes, fraction, whole))
  for fraction in V1_FRACTIONS:
    for whole in (False, True):
      rows.append(functools.partial(_v1_case, sizes, fraction, whole))
  for fraction in HINTED_FRACTIONS:
    for case in (_keras_case, _v1_case):
      rows.append(functools.partial(case, sizes, fraction, False, DEFAULT))
  return {"o": rows}
