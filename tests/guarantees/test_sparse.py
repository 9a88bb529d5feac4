"""`tf.IndexedSlices` gradients: masked sparse, and state from unfrozen steps.

An embedding lookup gives row gradients. The frozen rows are masked without
densifying and stay bit-for-bit fixed. That the trainable rows follow the
split reference, in every family, mode and entry point:
`conformance.Suite.test_row_gradients_train_exactly`.
"""

import numpy as np
import pytest
import tensorflow as tf

from embedding_problem import DIM, FROZEN_ROWS, IDS, TABLE0, embedding_loss
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
