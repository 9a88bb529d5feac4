"""An embedding problem with row gradients, and its split reference.

A table of ROWS rows, some frozen; a lookup of IDS (duplicates, frozen and
not) gives a `tf.IndexedSlices` gradient. The split reference trains the
trainable rows in a table of their own. Shared by the sparse and compact
tests.
"""

import numpy as np
import tensorflow as tf

import helpers

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


def split_reference(runner, make_optimizer):
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
  """Frozen rows bit for bit as they were; trainable rows bit for bit as
  the split reference has them (the optimizer gets the same slices, repeated
  ids and all), but under XLA, which fuses: float32 round-off."""
  for step, (table_now, small) in enumerate(zip(trajectory, reference), 1):
    helpers.assert_same_bits(table_now[FROZEN_ROWS], TABLE0[FROZEN_ROWS],
                             f"frozen rows, step {step}")
    if mode is helpers.XLA:
      np.testing.assert_allclose(table_now[TRAIN_ROWS], small, rtol=2e-5,
                                 atol=1e-6,
                                 err_msg=f"trainable rows, step {step}")
    else:
      helpers.assert_same_bits(table_now[TRAIN_ROWS], small,
                               f"trainable rows, step {step}")


# TF1 optimizers whose sparse update XLA can compile; the others use
# ResourceSparseApply* kernels that XLA does not have, with or without
# tfpartial.
XLA_SPARSE = ("GradientDescent", "Adam")

