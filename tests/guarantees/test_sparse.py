"""`tf.IndexedSlices` gradients: masked sparse, trained exactly, in every mode.

An embedding lookup gives row gradients. The frozen rows are masked without
densifying, stay bit-for-bit fixed, and the trainable rows follow a split
reference that looks its rows up in a separate, smaller table.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import problems
import tfpartial

ROWS, DIM = 7, 3
TABLE0 = np.random.default_rng(7).normal(size=(ROWS, DIM)).astype(np.float32)
FROZEN_ROWS = np.array([0, 1, 2, 5])
TRAIN_ROWS = np.setdiff1d(np.arange(ROWS), FROZEN_ROWS)
IDS = np.array([1, 4, 4, 6, 0, 3, 5, 4])  # Duplicates, frozen and not.
TARGET = np.linspace(-1.0, 1.0, IDS.size * DIM, dtype=np.float32).reshape(
    IDS.size, DIM)
STEPS = 3


def embedding_loss(rows):
  return tf.reduce_sum(tf.square(rows * 1.5 - TARGET))


def test_mask_gradients_keeps_indexed_slices_sparse():
  table = tf.Variable(TABLE0, name="table")
  spec = tfpartial.freeze(table, FROZEN_ROWS)
  with tf.GradientTape() as tape:
    value = embedding_loss(tf.gather(table, IDS))
  grad = tape.gradient(value, table)
  assert isinstance(grad, tf.IndexedSlices)
  grad = tf.IndexedSlices(grad.values + np.nan, grad.indices, grad.dense_shape)
  [(masked, variable)] = spec.mask_gradients([(grad, table)])
  assert variable is table
  assert isinstance(masked, tf.IndexedSlices), type(masked)
  np.testing.assert_array_equal(masked.indices.numpy(), IDS)
  frozen = np.isin(IDS, FROZEN_ROWS)
  helpers.assert_same_bits(masked.values.numpy()[frozen],
                           np.zeros((frozen.sum(), DIM), np.float32))
  assert np.isnan(masked.values.numpy()[~frozen]).all()


def _split_reference(runner, make_optimizer):
  """Trainable rows in their own table; frozen rows read from a constant one."""
  frozen_table = runner.variable(TABLE0, "frozen_table", trainable=False)
  small = runner.variable(TABLE0[TRAIN_ROWS], "small")
  gs = runner.variable(0, "gs_reference", dtype=tf.int64, trainable=False)
  optimizer = make_optimizer(gs)
  is_frozen = np.isin(IDS, FROZEN_ROWS)
  positions = np.arange(IDS.size)
  small_ids = np.searchsorted(TRAIN_ROWS, IDS[~is_frozen])

  def split_loss():
    rows = tf.dynamic_stitch(
        [positions[is_frozen], positions[~is_frozen]],
        [tf.gather(frozen_table, IDS[is_frozen]), tf.gather(small, small_ids)])
    return embedding_loss(rows)

  def step():
    grads = runner.gradients(split_loss, [small])
    if runner.graph:
      grads = tf.tuple(grads)
    return optimizer.apply_gradients(zip(grads, [small]), global_step=gs)

  return train(runner, step, small)


def train(runner, step, variable):
  """Runs the step `step` builds STEPS times; `variable` after each."""
  run = runner.step(step)
  trajectory = []
  for _ in range(STEPS):
    run()
    trajectory.append(runner.value(variable))
  return trajectory


def assert_rows_follow_the_reference(mode, trajectory, reference):
  """Frozen rows bit for bit as they were; trainable rows as the split
  reference has them, float32 round-off at most (XLA's a little more)."""
  tolerance = dict(rtol=2e-5, atol=1e-6) if mode is helpers.XLA else dict(
      rtol=1e-6, atol=1e-7)
  for step, (table_now, small) in enumerate(zip(trajectory, reference), 1):
    helpers.assert_same_bits(table_now[FROZEN_ROWS], TABLE0[FROZEN_ROWS],
                             f"frozen rows, step {step}")
    np.testing.assert_allclose(table_now[TRAIN_ROWS], small, **tolerance,
                               err_msg=f"trainable rows, step {step}")


# TF1 optimizers whose sparse update XLA can compile; the others use
# ResourceSparseApply* kernels that XLA does not have, with or without
# tfpartial.
XLA_SPARSE = ("GradientDescent", "Adam")


@pytest.mark.parametrize("name", sorted(problems.V1_OPTIMIZERS))
def test_row_gradients_train_exactly(mode, name):
  if mode is helpers.XLA and name not in XLA_SPARSE:
    pytest.skip(f"TensorFlow has no XLA kernel for {name}'s sparse update")
  make = problems.V1_OPTIMIZERS[name]
  with mode.runner() as runner:
    table = runner.variable(TABLE0, "table")
    gs = runner.variable(0, "gs", dtype=tf.int64, trainable=False)
    spec = tfpartial.freeze(table, FROZEN_ROWS)
    optimizer = make(gs)

    def step():
      grads = runner.gradients(
          lambda: embedding_loss(tf.gather(table, IDS)), [table])
      assert isinstance(grads[0], tf.IndexedSlices)
      poisoned = tf.IndexedSlices(
          tf.where(np.isin(IDS, FROZEN_ROWS)[:, None], np.inf,
                   grads[0].values), grads[0].indices, grads[0].dense_shape)
      return spec.apply_gradients(optimizer, [(poisoned, table)],
                                  global_step=gs)

    trajectory = train(runner, step, table)
    reference = _split_reference(runner, make)
  assert_rows_follow_the_reference(mode, trajectory, reference)
  assert not np.array_equal(trajectory[-1][TRAIN_ROWS], TABLE0[TRAIN_ROWS])


@pytest.mark.parametrize("name", sorted(problems.V1_OPTIMIZERS))
def test_state_from_unfrozen_sparse_steps_moves_no_frozen_row(exact_mode, name):
  """Rows outside the batch move too when an optimizer's sparse update is not
  lazy (TF1 Adam decays m and v everywhere): those must be restored too."""
  make = problems.V1_OPTIMIZERS[name]
  with exact_mode.runner() as runner:
    table = runner.variable(TABLE0, "table")
    gs = runner.variable(0, "gs", dtype=tf.int64, trainable=False)
    spec = tfpartial.freeze(table, FROZEN_ROWS)
    optimizer = make(gs)

    def step(frozen):
      ids = IDS if not frozen else np.array([4, 6, 1])  # Not rows 0, 2, 5.
      grads = runner.gradients(
          lambda: tf.reduce_sum(tf.square(tf.gather(table, ids) - 3.0)),
          [table])
      if frozen:
        return spec.apply_gradients(optimizer, zip(grads, [table]),
                                    global_step=gs)
      return optimizer.apply_gradients(zip(grads, [table]), global_step=gs)

    warm, partial = runner.step(lambda: step(False)), runner.step(
        lambda: step(True))
    warm()
    warm()
    at_freeze = runner.value(table)
    for _ in range(3):
      partial()
      helpers.assert_same_bits(runner.value(table)[FROZEN_ROWS],
                               at_freeze[FROZEN_ROWS], "frozen rows")
