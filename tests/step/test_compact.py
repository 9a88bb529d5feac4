"""Row specs at scale: compact row training and memory that follows the rows.

`train_only(table, rows, compact=True)`: the optimizer's state covers only
the trainable rows, frozen rows are never touched, and the trained rows
follow the split-variable reference, in every mode.
"""

import json
import tracemalloc

import keras
import numpy as np
import pytest
import tensorflow as tf

import helpers
import problems
import tfpartial
from embedding_problem import (IDS, TABLE0, TRAIN_ROWS, FROZEN_ROWS,
                               XLA_SPARSE, split_reference,
                               assert_rows_follow_the_reference,
                               embedding_loss, train)


@pytest.mark.parametrize("name", sorted(problems.V1_OPTIMIZERS))
def test_compact_rows_follow_the_split_reference(mode, name):
  if mode is helpers.XLA and name not in XLA_SPARSE:
    pytest.skip(f"TensorFlow has no XLA kernel for {name}'s sparse update")
  make = problems.V1_OPTIMIZERS[name]
  with mode.runner() as runner:
    table = runner.variable(TABLE0, "table")
    gs = runner.variable(0, "gs", dtype=tf.int64, trainable=False)
    spec = tfpartial.train_only(table, TRAIN_ROWS, compact=True)
    optimizer = make(gs)

    def step():
      grads = runner.gradients(
          lambda: embedding_loss(tf.gather(table, IDS)), [table])
      return spec.apply_gradients(optimizer, zip(grads, [table]),
                                  global_step=gs)

    trajectory = train(runner, step, table)
    slots = [tuple(v.shape) for v in optimizer.variables()
             if v.shape.rank == 2]
    reference = split_reference(runner, make)
  assert all(shape[0] == TRAIN_ROWS.size for shape in slots), slots
  if name not in ("GradientDescent", "ProximalGradientDescent"):
    assert slots, "no slots: the optimizer did not train"
  assert_rows_follow_the_reference(mode, trajectory, reference)


# Rows 3 and 4; or an element mask (a vector of its elements trains).
TRAINED = {"rows": np.isin(np.arange(TABLE0.shape[0]), [3, 4])[:, None]
                   & np.ones(TABLE0.shape, bool),
           "elements": np.random.default_rng(2).random(TABLE0.shape) < 0.4}


@pytest.mark.parametrize("kind", sorted(TRAINED))
def test_compact_with_a_dense_gradient_and_assigns_between_steps(exact_mode,
                                                                 kind):
  trained = TRAINED[kind]
  with exact_mode.runner() as runner:
    table = runner.variable(TABLE0, "table")
    index = np.s_[3:5] if kind == "rows" else trained
    spec = tfpartial.train_only(table, index, compact=True)
    optimizer = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)

    def step():
      grads = runner.gradients(lambda: tf.reduce_sum(tf.sin(table)), [table])
      return spec.apply_gradients(optimizer, zip(grads, [table]))

    run = runner.step(step)
    run()
    written = runner.value(table) + 10.0
    runner.assign(table, written)
    run()
    after = runner.value(table)
  frozen = ~trained
  helpers.assert_same_bits(after[frozen], written[frozen], "frozen")
  # What trains continued from the assigned values, not from before.
  assert np.abs(after[~frozen] - written[~frozen]).max() < 1.0


def test_keras_fit_with_a_compact_embedding():
  vocabulary, new = 1000, 10
  model = keras.Sequential([keras.Input((4,), dtype="int32"),
                            keras.layers.Embedding(vocabulary, 8),
                            keras.layers.GlobalAveragePooling1D(),
                            keras.layers.Dense(1)])
  embeddings = model.layers[0].embeddings
  spec = tfpartial.train_only(embeddings, np.s_[vocabulary - new:],
                              compact=True)
  optimizer = spec.wrap(keras.optimizers.Adam(0.05))
  model.compile(optimizer=optimizer, loss="mse")
  before = embeddings.numpy()
  ids = np.array([[1, 995, 999, 4], [992, 3, 2, 998]], np.int32)
  model.fit(ids, np.ones((2, 1)), epochs=3, verbose=0)
  helpers.assert_same_bits(embeddings.numpy()[:-new], before[:-new], "old rows")
  assert not np.array_equal(embeddings.numpy()[-new:], before[-new:])
  table_sized = [v for v in optimizer.variables
                 if tuple(v.shape) == (vocabulary, 8)]
  assert not table_sized, "the optimizer holds state the size of the table"


def test_compact_round_trips_through_spec_files():
  table = tf.Variable(np.zeros((50, 2), np.float32), name="t")
  spec = tfpartial.train_only(table, np.s_[40:], compact=True)
  text = spec.to_json()
  assert json.loads(text)["t"] == {"train_only": "40:", "shape": [50, 2],
                                   "compact": True}
  assert repr(tfpartial.load_spec(text, [table])) == repr(spec)


def test_compact_of_what_is_not_rows_trains_elements():
  """Not whole rows: compact trains a vector of the elements (once an
  error; `test_compact_elements.py` trains it)."""
  x = tf.Variable(np.zeros((3, 4), np.float32), name="x")
  spec = tfpartial.train_only(x, np.s_[:, 1], compact=True)
  assert repr(spec) == "FreezeSpec(x: 9/12 frozen, compact)"
  with pytest.raises(IndexError, match=r"out of range"):
    tfpartial.train_only(x, np.s_[:, 9], compact=True)
  with pytest.raises(ValueError, match=r"not a mask variable"):
    tfpartial.train_only(x, tf.Variable(np.ones((3, 4), bool)), compact=True)


def test_row_spec_memory_follows_the_rows_named():
  """A spec on a 500,000 x 64 table allocates nothing the size of the table."""
  table = tf.Variable(tf.zeros([500_000, 64]), name="table")
  table_bytes = 500_000 * 64 * 4
  for build, index, most in (
      (tfpartial.train_only, np.arange(499_000, 500_000), 64_000),
      (tfpartial.train_only, np.s_[499_000:], 64_000),
      (tfpartial.freeze, np.s_[:1000], 64_000)):
    tracemalloc.start()
    spec = build(table, index)
    text = repr(spec)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < most, (index, peak)
    assert peak < table_bytes / 1000, (index, peak)
    del spec, text
