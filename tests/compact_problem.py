"""A compact embedding looked up with repeated ids, and its split reference.

A table of ROWS x DIM; a batch of ids (`IDS`) that repeats ids, trainable
and frozen, as real batches do. `KINDS`: whole rows train ("rows", a small
variable of rows) or an element mask ("elements", a vector of elements).
The split-variable reference (`split_lookup`) holds only what trains, in
the order the compact layout keeps it, and reads the frozen values from a
constant table; its gradient is the `tf.IndexedSlices` a lookup gives, so
the optimizer sees the same slices, repeats and all, as it does under
tfpartial. Keras models of both (`keras_models`) for `fit` and custom
loops of Keras 3 and tf_keras.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import helpers

ROWS, DIM = 8, 3
TABLE0 = np.random.default_rng(33).normal(size=(ROWS, DIM)).astype(np.float32)
# Two examples of four ids: 4 three times, 6 twice, frozen ids 0 and 1.
IDS = np.array([[1, 4, 4, 6], [4, 3, 0, 6]], np.int32)
TARGET = np.linspace(-1.0, 1.0, IDS.size * DIM, dtype=np.float32).reshape(
    IDS.shape + (DIM,))
STEPS = 3

TRAIN_ROWS = np.array([3, 4, 6])
_ELEMENTS = np.random.default_rng(34).random((ROWS, DIM)) < 0.5
_ELEMENTS[4] = [True, False, True]  # The repeated id: partly trainable.
_ELEMENTS[1] = False  # A looked-up row with nothing trainable.
# kind -> (the index `train_only` takes, True where an element trains).
KINDS = {
    "rows": (TRAIN_ROWS, np.isin(np.arange(ROWS), TRAIN_ROWS)[:, None]
             & np.ones((ROWS, DIM), bool)),
    "elements": (_ELEMENTS, _ELEMENTS),
}


def trains(kind: str) -> np.ndarray:
  return KINDS[kind][1]


def loss(rows):
  """A loss whose gradient differs per id and per column."""
  return tf.reduce_sum(squared_sum(TARGET, rows))


def squared_sum(target, rows):
  """Per example: Keras' loss function for `fit`."""
  return tf.reduce_sum(tf.square(rows * 1.5 - target), axis=[1, 2])


def split_start(kind: str) -> np.ndarray:
  """The reference's variable: what trains (rows, or elements in row-major
  order), then one slot more, which frozen ids read (`split_lookup`)."""
  if kind == "rows":
    return np.concatenate([TABLE0[TRAIN_ROWS], np.zeros((1, DIM), np.float32)])
  return np.append(TABLE0[trains(kind)], np.float32(0))


def trained_part(small: np.ndarray) -> np.ndarray:
  """What trains of the reference's variable, as `table[trains(kind)]`
  reads it."""
  return small[:-1].reshape(-1)


def _slots(kind: str) -> np.ndarray:
  """Where each row (or element) sits in the reference's variable; the last
  slot for a frozen one."""
  mask = (np.isin(np.arange(ROWS), TRAIN_ROWS) if kind == "rows"
          else trains(kind).reshape(-1))
  slots = np.cumsum(mask) - 1
  slots[~mask] = mask.sum()
  return slots.astype(np.int32)


def split_lookup(small, frozen, kind: str, ids, static: bool = False):
  """The rows `ids` look up, what trains read from `small`, the rest from
  `frozen`.

  The gradient of `small` is the slices a lookup of the trainable ids (or
  elements) gives, in their order, repeats kept. `static`, for XLA, which
  needs static shapes: every id reads `small`, a frozen one its last slot
  (with a zero gradient, on a slot no check reads); elsewhere only the
  trainable ones do, so that the optimizer's ops see tensors of the very
  shapes they see under tfpartial (TensorFlow's vectorized kernels round
  the tail of a tensor differently from its body).
  """
  ids = tf.cast(ids, tf.int32)
  slots = _slots(kind)
  if kind == "rows":
    where, width = tf.reshape(ids, [-1]), [DIM]
    is_trained = tf.gather(slots < TRAIN_ROWS.size, where)
  else:
    where = tf.reshape(ids[..., None] * DIM + np.arange(DIM, dtype=np.int32),
                       [-1])
    frozen, width = tf.reshape(frozen, [-1]), []
    is_trained = tf.gather(trains(kind).reshape(-1), where)
  if static:
    picked = tf.gather(small, tf.gather(slots, where))
    mask = tf.reshape(is_trained, [-1] + [1] * len(width))
    rows = tf.where(mask, picked, tf.gather(frozen, where))
  else:
    hit, miss = (tf.cast(tf.where(is_trained)[:, 0], tf.int32),
                 tf.cast(tf.where(~is_trained)[:, 0], tf.int32))
    rows = tf.dynamic_stitch(
        [miss, hit],
        [tf.gather(frozen, tf.gather(where, miss)),
         tf.gather(small, tf.gather(slots, tf.gather(where, hit)))])
  return tf.reshape(rows, tf.concat([tf.shape(ids), [DIM]], 0))


def check(kind: str, trajectory, reference, exact: bool) -> None:
  """Frozen elements bit for bit as they were; the trainable ones bit for
  bit as the reference has them where `exact` (nothing fuses), else to
  float32 round-off; and those looked up moved."""
  trained = trains(kind)
  assert len(trajectory) == len(reference) == STEPS
  for step, (table, small) in enumerate(zip(trajectory, reference), start=1):
    helpers.assert_same_bits(table[~trained], TABLE0[~trained],
                             f"frozen elements, step {step}")
    if exact:
      helpers.assert_same_bits(table[trained], trained_part(small),
                               f"trainable elements, step {step}")
    else:
      np.testing.assert_allclose(table[trained], trained_part(small),
                                 rtol=2e-5, atol=1e-6,
                                 err_msg=f"trainable elements, step {step}")
  looked_up = trained & np.isin(np.arange(ROWS), IDS)[:, None]
  assert (trajectory[-1][looked_up] != TABLE0[looked_up]).all()


def keras_models(module):
  """(table model, split model) classes of a Keras package (`keras` or
  `tf_keras`): the first looks ids up in its `table`, the second is the
  split reference of a kind (`static` where XLA compiles it)."""
  constant = module.initializers.Constant

  class TableModel(module.Model):
    """The table as a weight; a lookup's gradient is `tf.IndexedSlices`."""

    def __init__(self):
      super().__init__()
      self.table = self.add_weight(name="table", shape=TABLE0.shape,
                                   initializer=constant(TABLE0))

    def call(self, ids):
      return tf.gather(tf.convert_to_tensor(self.table), tf.cast(ids, tf.int32))

    def values(self):
      return np.array(self.table.numpy())

  class SplitModel(module.Model):
    """What trains as a weight; the frozen table a constant."""

    def __init__(self, kind, static=False):
      super().__init__()
      self.kind, self.static = kind, static
      start = split_start(kind)
      self.small = self.add_weight(name="small", shape=start.shape,
                                   initializer=constant(start))
      self.frozen = self.add_weight(name="frozen", shape=TABLE0.shape,
                                    initializer=constant(TABLE0),
                                    trainable=False)

    def call(self, ids):
      return split_lookup(tf.convert_to_tensor(self.small),
                          tf.convert_to_tensor(self.frozen), self.kind, ids,
                          self.static)

    def values(self):
      return np.array(self.small.numpy())

  return TableModel, SplitModel


def train_keras(module, model, optimizer, spec, mode, copies=1):
  """Trains a Keras model of `keras_models` in `mode` (a
  `helpers.KerasMode`, under `spec` when given): its values after each
  step. `fit`'s batch holds `copies` copies of `IDS` (one for each of
  several replicas)."""
  trajectory = []
  if mode.fit:
    record = module.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: trajectory.append(
            model.values()))
    model.compile(optimizer=spec.wrap(optimizer) if spec else optimizer,
                  loss=squared_sum)
    ids, target = (np.concatenate([IDS] * copies),
                   np.concatenate([TARGET] * copies))
    model.fit(ids, target, batch_size=len(ids), epochs=STEPS, shuffle=False,
              verbose=0, callbacks=[record])
    return trajectory
  variables = model.trainable_variables
  if spec is None:
    apply = optimizer.apply_gradients
  elif mode.wrap:
    apply = spec.wrap(optimizer).apply_gradients
  else:
    apply = lambda pairs: spec.apply_gradients(optimizer, pairs)

  def step():
    with tf.GradientTape() as tape:
      value = loss(model(IDS))
    apply(list(zip(tape.gradient(value, variables), variables)))

  step = mode.compiled(step)
  for _ in range(STEPS):
    step()
    trajectory.append(model.values())
  return trajectory
