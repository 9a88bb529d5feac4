"""`tf.IndexedSlices` gradients: masked sparse, trained exactly, in every mode.

An embedding lookup gives row gradients. The frozen rows are masked without
densifying, stay bit-for-bit fixed, and the trainable rows follow a split
reference that looks its rows up in a separate, smaller table.
"""

import numpy as np
import pytest
import tensorflow as tf

from embedding_problem import (DIM, FROZEN_ROWS, IDS, TABLE0, XLA_SPARSE,
                               TRAIN_ROWS, assert_rows_follow_the_reference,
                               embedding_loss, split_reference, train)
import helpers
import problems
import tfpartial


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
    reference = split_reference(runner, make)
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
