"""(r) Compact rows with repeated ids, and under `MirroredStrategy`.

A 500,000 x 64 table of which the last 1,000 rows train with
`train_only(table, rows, compact=True)`, looked up by a batch of 4,096 ids
that repeats a few trainable rows many times (a heavy head, as real batches
have) beside frozen ones: the optimizer gets the slices the split
reference's own gradient holds, repeats and all. Keras Adam in a
`tf.function` and v1 Adam in a TF1 graph, each against the same optimizer
on the whole table; then Keras Adam (wrapped, built in the scope) in
`strategy.run` under a one-replica `MirroredStrategy` (the bench process
cannot make logical devices once TensorFlow runs), against the plain
optimizer under the same strategy. The state compared is the optimizers'
own variables.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import tensorflow as tf

from tfpartial._api import _make
from tfpartial._tools.bench import _measure
from tfpartial._tools.bench._cases import state_bytes
from tfpartial._tools.bench._measure import Case

# Rows, dim, trainable rows (the last ones), batch.
Sizes = Tuple[int, int, int, int]
FULL: Sizes = (500_000, 64, 1_000, 4_096)
QUICK: Sizes = (5_000, 8, 10, 64)
# The head of the batch: this many trainable rows take half of its ids.
HEAD = 8


def _problem(sizes: Sizes) -> Tuple[np.ndarray, np.ndarray]:
  """The table's values and the batch's ids: half of them from `HEAD`
  trainable rows (each repeated about batch / 16 times), half frozen."""
  rows, dim, trained, batch = sizes
  rng = np.random.default_rng(4)
  table0 = rng.normal(size=(rows, dim)).astype(np.float32)
  head = rng.integers(rows - trained, rows, HEAD)
  ids = np.concatenate([rng.choice(head, batch // 2),
                        rng.integers(0, rows - trained, batch - batch // 2)])
  return table0, rng.permutation(ids)


def _title(sizes: Sizes, what: str) -> str:
  rows, dim, trained, batch = sizes
  return (f"(r) embedding {rows:,}x{dim}, {trained:,} rows train, "
          f"{batch:,} ids repeating {HEAD} rows, compact, {what}")


def _case(sizes: Sizes, what: str, plain: Callable[[], Any],
          partial: Callable[[], Any], state: Callable[[], Tuple[int, int]],
          limit: float = 0.1) -> Case:
  return Case(_title(sizes, what), plain, partial,
              f"<= {limit:g}, state <= 1%", limit=limit, state=state,
              state_limit=0.01)


def _keras_case(sizes: Sizes, mirrored: bool) -> Case:
  """Keras Adam in a `tf.function`; under a one-replica MirroredStrategy
  with `mirrored` (wrapped and built in the scope, as Keras asks)."""
  import keras  # pylint: disable=g-import-not-at-top
  rows, _, trained, _ = sizes
  table0, ids = _problem(sizes)
  strategy = (tf.distribute.MirroredStrategy(["/cpu:0"]) if mirrored
              else tf.distribute.get_strategy())
  optimizers: Dict[bool, Any] = {}

  def build(partial: bool) -> Callable[[], Any]:
    with strategy.scope():
      table = tf.Variable(table0)
      spec = _make.train_only(table, np.s_[rows - trained:], compact=True)
      optimizer = keras.optimizers.Adam(1e-3)
      if mirrored:  # Keras cannot build in strategy.run.
        if partial:
          optimizer = spec.wrap(optimizer)
        optimizer.build([table])
    optimizers[partial] = optimizer

    def replica() -> Any:
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.gather(table, ids) - 1.0))
      pairs = [(tape.gradient(loss, table), table)]
      if partial and not mirrored:
        return spec.apply_gradients(optimizer, pairs)
      return optimizer.apply_gradients(pairs)

    @_measure.function()
    def step() -> Any:
      return strategy.run(replica) if mirrored else replica()

    return step

  plain, partial = build(False), build(True)
  plain(), partial()  # Build the optimizers, for their state sizes.
  what = ("Keras Adam, MirroredStrategy (1 replica)" if mirrored
          else "Keras Adam, tf.function")
  # Under the strategy TensorFlow's lookup reads the mirrored table whole,
  # plain as with tfpartial: a part of both steps that compact cannot save.
  return _case(sizes, what, plain, partial,
               lambda: (state_bytes(optimizers[True].variables),
                        state_bytes(optimizers[False].variables)),
               limit=0.5 if mirrored else 0.1)


def _v1_case(sizes: Sizes) -> Case:
  """v1 Adam in a TF1 graph and `Session`: `minimize`."""
  rows, _, trained, _ = sizes
  table0, ids = _problem(sizes)
  state: Dict[bool, int] = {}

  def build(partial: bool) -> Callable[[], Any]:
    graph = tf.Graph()
    with graph.as_default():
      table = tf.compat.v1.Variable(table0, use_resource=True)
      optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
      spec = _make.train_only(table, np.s_[rows - trained:], compact=True)
      loss = tf.reduce_sum(tf.square(tf.gather(table, ids) - 1.0))
      train_op = (spec.minimize(optimizer, loss) if partial
                  else optimizer.minimize(loss))
      session = tf.compat.v1.Session(graph=graph)
      session.run(tf.compat.v1.global_variables_initializer())
      state[partial] = state_bytes(optimizer.variables())
    return lambda: session.run(train_op)

  plain, partial = build(False), build(True)
  return _case(sizes, "v1 Adam, TF1 graph", plain, partial,
               lambda: (state[True], state[False]))


def cases(quick: bool) -> Dict[str, List[Callable[[], Case]]]:
  """(r), by letter: its rows, each built when called."""
  sizes = QUICK if quick else FULL
  return {"r": [functools.partial(_keras_case, sizes, False),
                functools.partial(_v1_case, sizes),
                functools.partial(_keras_case, sizes, True)]}
