"""A TF1 embedding table partitioned into parts, looked up as users do.

`Problem` builds, in the current graph, a table of `ROWS` rows split into
`parts` parts (`fixed_size_partitioner`), and a loss reading every id
through `tf.compat.v1.nn.embedding_lookup(..., partition_strategy=...)`;
`reference` builds the split-variable reference: a variable holding only
the rows that train (in id order), the frozen rows constants, read
through a `tf.gather` so that its gradient is as sparse as the table's.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

ROWS, DIM = 10, 3
IDS = np.arange(ROWS, dtype=np.int64)
TARGET = np.linspace(-2.0, 3.0, ROWS * DIM, dtype=np.float32).reshape(
    ROWS, DIM)
FROZEN_IDS = np.array([1, 2, 5, 9], dtype=np.int64)
TRAIN_IDS = np.setdiff1d(IDS, FROZEN_IDS)


def table(name="emb", parts=4, use_resource=True):
  return tf.compat.v1.get_variable(
      name, [ROWS, DIM], use_resource=use_resource,
      initializer=tf.compat.v1.random_normal_initializer(seed=7),
      partitioner=tf.compat.v1.fixed_size_partitioner(parts))


def loss_of(looked):
  """A loss whose gradient differs per row and per column."""
  return tf.reduce_sum(tf.square(looked - TARGET) * (1.0 + TARGET / 10.0))


class Problem:
  """The table, its lookup of every id, and the loss."""

  def __init__(self, strategy, parts=4, use_resource=True, name="emb"):
    self.strategy = strategy
    self.table = table(name, parts, use_resource)
    self.looked = self.lookup(IDS)
    self.loss = loss_of(self.looked)

  def lookup(self, ids):
    return tf.compat.v1.nn.embedding_lookup(
        self.table, ids, partition_strategy=self.strategy)


def reference(start, optimizer, steps, session):
  """The trainable ids' rows after `steps` steps of the split-variable
  reference from `start` (every id's row, in id order)."""
  trained = tf.compat.v1.Variable(start[TRAIN_IDS], name="reference",
                                  use_resource=True)
  position = np.zeros(ROWS, np.int64)
  position[TRAIN_IDS] = np.arange(TRAIN_IDS.size)
  is_frozen = np.isin(IDS, FROZEN_IDS)[:, None]
  looked = tf.where(is_frozen, start, tf.gather(trained, position))
  op = optimizer.minimize(loss_of(looked), var_list=[trained])
  session.run(tf.compat.v1.variables_initializer(
      [trained] + optimizer.variables()))
  for _ in range(steps):
    session.run(op)
  return session.run(trained)
