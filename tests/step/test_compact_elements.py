"""Compact element masks: `train_only(w, mask, compact=True)` for any mask.

The optimizer trains a vector of the trainable elements (row-major), so its
slots hold only those; the frozen elements are never read or written by
it, and the trainable ones follow the split-variable reference (a vector
of the same elements, trained by the same optimizer) bit for bit, in every
exact mode (XLA fuses: float32 round-off). Every tf.compat.v1 optimizer
here; the Keras families in tests/families (test_keras, test_tf_keras).
"""

import json

import numpy as np
import pytest
import tensorflow as tf

import helpers
import problems
import tfpartial
from embedding_problem import STEPS, train
from problems import B0, C0, X0, X_FROZEN
TRAINABLE = int((~X_FROZEN).sum())


def _compact_spec(model):
  return (tfpartial.train_only(model.x, ~X_FROZEN, compact=True)
          | tfpartial.freeze(model.b))


def _train(mode, name, entry):
  make = problems.V1_OPTIMIZERS[name]
  with mode.runner() as runner:
    model = problems.Model.build(runner)
    optimizer = make(model.global_step)
    run = runner.step(problems.steps_for(entry, runner, _compact_spec(model),
                                         optimizer, model))
    trajectory = []
    for _ in range(STEPS):
      run()
      trajectory.append([runner.value(v) for v in model.variables])
    x_slots = [optimizer.get_slot(model.x, slot)
               for slot in optimizer.get_slot_names()]
    shapes = sorted({tuple(v.shape.as_list()) for v in optimizer.variables()})
    reference = problems.split_reference(runner, make, STEPS)
  return trajectory, reference, x_slots, shapes


def _check(mode, trajectory, reference):
  for step, ((x, b, c), (t_ref, c_ref)) in enumerate(
      zip(trajectory, reference), start=1):
    helpers.assert_same_bits(x[X_FROZEN], X0[X_FROZEN], f"x frozen, step {step}")
    helpers.assert_same_bits(b, B0, f"b, step {step}")
    if mode is helpers.XLA:  # XLA fuses the update: round-off, not bits.
      np.testing.assert_allclose(x[~X_FROZEN], t_ref, rtol=2e-5, atol=1e-6)
      np.testing.assert_allclose(c, c_ref, rtol=2e-5, atol=1e-6)
    else:
      helpers.assert_same_bits(x[~X_FROZEN], t_ref, f"x trainable, step {step}")
      helpers.assert_same_bits(c, c_ref, f"c, step {step}")
  assert not np.array_equal(trajectory[-1][0][~X_FROZEN], X0[~X_FROZEN])


@pytest.mark.parametrize("name", sorted(problems.V1_OPTIMIZERS))
def test_compact_elements_follow_the_split_reference(mode, name):
  trajectory, reference, x_slots, shapes = _train(mode, name, "apply_gradients")
  _check(mode, trajectory, reference)
  assert all(slot is None for slot in x_slots), "x itself got slots"
  # Every slot is a scalar, or of the trainable elements, or of c.
  assert set(shapes) <= {(), (TRAINABLE,), C0.shape}, shapes


# An embedding whose rows are partly frozen, element by element; a lookup
# gives a `tf.IndexedSlices` gradient.
ROWS, DIM = 6, 4
TABLE0 = np.random.default_rng(11).normal(size=(ROWS, DIM)).astype(np.float32)
TRAIN = np.random.default_rng(12).random((ROWS, DIM)) < 0.4
TRAIN[3] = False  # A looked-up row with nothing trainable.
IDS = np.array([1, 4, 4, 0, 3, 5, 1])  # Duplicates.
TARGET = np.linspace(-1, 1, IDS.size * DIM, dtype=np.float32).reshape(-1, DIM)


def _embedding_loss(rows):
  return tf.reduce_sum(tf.square(rows * 1.5 - TARGET))


def _sparse_reference(runner, make):
  """The trainable elements as a vector; each looked-up row stitched from
  it and the frozen values, so that its gradient is sparse too."""
  small = runner.variable(TABLE0[TRAIN], "small")
  frozen = runner.variable(TABLE0, "frozen_table", trainable=False)
  optimizer = make(None)
  positions = np.cumsum(TRAIN.reshape(-1)).reshape(TRAIN.shape) - 1
  looked_up = TRAIN[IDS]
  picks = positions[IDS][looked_up]

  def loss():
    rows = tf.tensor_scatter_nd_update(tf.gather(frozen, IDS),
                                       np.argwhere(looked_up),
                                       tf.gather(small, picks))
    return _embedding_loss(rows)

  def step():
    grads = runner.gradients(loss, [small])
    return optimizer.apply_gradients(zip(grads, [small]))

  return train(runner, step, small)


@pytest.mark.parametrize("name", ["GradientDescent", "Momentum", "Adagrad",
                                  "Adam", "Ftrl_shrinkage"])
def test_compact_elements_of_an_embedding_with_sparse_gradients(exact_mode,
                                                                 name):
  make = problems.V1_OPTIMIZERS[name]
  with exact_mode.runner() as runner:
    table = runner.variable(TABLE0, "table")
    spec = tfpartial.train_only(table, TRAIN, compact=True)
    optimizer = make(None)
    seen = []

    def step():
      grads = runner.gradients(
          lambda: _embedding_loss(tf.gather(table, IDS)), [table])
      seen.append(type(grads[0]))
      return spec.apply_gradients(optimizer, zip(grads, [table]))

    trajectory = train(runner, step, table)
    shapes = {tuple(v.shape.as_list()) for v in optimizer.variables()}
    reference = _sparse_reference(runner, make)
  assert tf.IndexedSlices in seen
  assert (ROWS, DIM) not in shapes, shapes
  for step, (table_now, small) in enumerate(zip(trajectory, reference), 1):
    helpers.assert_same_bits(table_now[~TRAIN], TABLE0[~TRAIN],
                             f"frozen elements, step {step}")
    helpers.assert_same_bits(table_now[TRAIN], small,
                             f"trainable elements, step {step}")
  assert not np.array_equal(trajectory[-1][TRAIN], TABLE0[TRAIN])


def _handed(monkeypatch, cls):
  """The pairs a step of `cls` hands the optimizer, for the embedding."""
  table = tf.Variable(TABLE0, name="table")
  spec = tfpartial.train_only(table, TRAIN, compact=True)
  handed = []
  apply = cls.apply_gradients

  def recording(self, grads_and_vars, *args, **kwargs):
    pairs = list(grads_and_vars)
    handed.extend(pairs)
    return apply(self, pairs, *args, **kwargs)

  monkeypatch.setattr(cls, "apply_gradients", recording)
  with tf.GradientTape() as tape:
    loss = _embedding_loss(tf.gather(table, IDS))
  grad = tape.gradient(loss, table)
  spec.apply_gradients(cls(0.1), [(grad, table)])
  (small_grad, small), = handed
  assert small.shape == (int(TRAIN.sum()),)
  return grad, small_grad


@pytest.mark.parametrize("cls", [tf.compat.v1.train.GradientDescentOptimizer,
                                 tf.compat.v1.train.AdamOptimizer],
                         ids=["lazy", "not_lazy"])
def test_the_sparse_gradient_stays_sparse_repeats_and_all(monkeypatch, cls):
  """Every optimizer, lazy (row-sparse) or not, gets IndexedSlices of the
  small vector: the trainable elements of the looked-up rows, repeated ids
  kept, in order, as the split reference's own gradient holds them. (Once
  an optimizer that is not lazy got their sums, a dense gradient: Keras'
  Adam then squared the sums where it squares each slice.)"""
  grad, small_grad = _handed(monkeypatch, cls)
  assert isinstance(small_grad, tf.IndexedSlices)
  positions = np.cumsum(TRAIN.reshape(-1)).reshape(TRAIN.shape) - 1
  looked_up = TRAIN[IDS]
  np.testing.assert_array_equal(small_grad.indices.numpy(),
                                positions[IDS][looked_up])
  helpers.assert_same_bits(small_grad.values.numpy(),
                           grad.values.numpy()[looked_up], "values")


def test_compact_elements_round_trip_through_spec_files(tmp_path):
  big = tf.Variable(np.zeros((300, 40), np.float32), name="big")
  mask = np.random.default_rng(0).random((300, 40)) < 0.01
  spec = tfpartial.train_only(big, mask, compact=True)
  path = tmp_path / "spec.json"
  data = json.loads(spec.to_json(path))
  assert data["big"]["compact"] is True and "train_only" in data["big"]
  loaded = tfpartial.load_spec(path, [big])
  assert repr(loaded) == repr(spec) and "compact" in repr(spec)
  np.testing.assert_array_equal(loaded.frozen_mask(big), ~mask)
  small = tf.Variable(np.zeros((3, 4), np.float32), name="small")
  inline = tfpartial.train_only(small, ~X_FROZEN, compact=True)
  entry = json.loads(inline.to_json())["small"]
  assert set(entry) == {"train_only", "shape", "compact"}, entry
  assert repr(tfpartial.load_spec(inline.to_json(), [small])) == repr(inline)


def test_union_keeps_compact_and_what_trains():
  x = tf.Variable(X0, name="x")
  spec = (tfpartial.train_only(x, ~X_FROZEN, compact=True)
          | tfpartial.freeze(x, (2, 1)))
  expected = X_FROZEN.copy()
  expected[2, 1] = True
  np.testing.assert_array_equal(spec.frozen_mask(x), expected)
  assert repr(spec).endswith("compact)"), repr(spec)


def test_compact_needs_a_fixed_index():
  x = tf.Variable(np.zeros((3, 4), np.float32), name="x")
  with pytest.raises(ValueError, match=r"`compact` needs a fixed index for "
                     r"variable 'x' of shape \(3, 4\), not a mask variable"):
    tfpartial.train_only(x, tf.Variable(np.ones((3, 4), bool)), compact=True)
  with pytest.raises(IndexError, match=r"out of range"):
    tfpartial.train_only(x, np.s_[:, 9], compact=True)
  with pytest.raises(ValueError, match=r"shape"):
    tfpartial.train_only(x, np.ones((4, 3), bool), compact=True)


def test_compact_elements_of_a_three_axis_variable(tf2_mode):
  """Coordinates on every axis: each trainable element written back where
  it came from."""
  rng = np.random.default_rng(5)
  w0 = rng.normal(size=(3, 4, 5)).astype(np.float32)
  train = rng.random(w0.shape) < 0.3
  w, small = tf.Variable(w0, name="w"), tf.Variable(w0[train], name="small")
  spec = tfpartial.train_only(w, train, compact=True)
  optimizer, reference = (tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
                          tf.compat.v1.train.MomentumOptimizer(0.1, 0.9))
  grad = rng.normal(size=w0.shape).astype(np.float32)

  def step():
    spec.apply_gradients(optimizer, [(tf.constant(grad), w)])
    reference.apply_gradients([(tf.constant(grad[train]), small)])

  step = tf2_mode.function(step) if tf2_mode.function else step
  for _ in range(3):
    step()
  helpers.assert_same_bits(w.numpy()[~train], w0[~train], "frozen")
  helpers.assert_same_bits(w.numpy()[train], small.numpy(), "trainable")


def _write_back_ops(jit_compile=False, **kwargs):
  """The scatter ops of a compact step's write-back, and the result."""
  rng = np.random.default_rng(9)
  w0 = rng.normal(size=(40, 30)).astype(np.float32)
  train = rng.random(w0.shape) < 0.05
  w, small = tf.Variable(w0, name="w"), tf.Variable(w0[train], name="small")
  spec = tfpartial.train_only(w, train, compact=True)
  optimizer, reference = (tf.compat.v1.train.AdamOptimizer(0.1),
                          tf.compat.v1.train.AdamOptimizer(0.1))
  grad = rng.normal(size=w0.shape).astype(np.float32)

  def step():
    spec.apply_gradients(optimizer, [(tf.constant(grad), w)])

  step = tf.function(step, jit_compile=jit_compile)
  ops = {op.type for op in step.get_concrete_function().graph.get_operations()
         if "Scatter" in op.type}
  for _ in range(2):
    step()
    reference.apply_gradients([(tf.constant(grad[train]), small)])
  helpers.assert_same_bits(w.numpy()[~train], w0[~train], "frozen")
  if not jit_compile:
    helpers.assert_same_bits(w.numpy()[train], small.numpy(), "trainable")
  return ops


def test_the_compiled_scatter_writes_back_where_it_is_loaded(compiled_kernel):
  assert _write_back_ops() == {"TfpartialResourceScatterOffsets"}


def test_without_the_kernel_tensorflow_scatters_as_exactly(monkeypatch):
  helpers.unfused(monkeypatch)
  assert _write_back_ops() == {"ResourceScatterNdUpdate"}


def test_under_xla_tensorflow_scatters(compiled_kernel):
  assert _write_back_ops(jit_compile=True) == {"ResourceScatterNdUpdate"}


@pytest.mark.parametrize("index", [np.s_[1:], ~X_FROZEN], ids=["rows",
                                                              "elements"])
def test_compact_under_a_strategy_trains_a_mirrored_small_variable(index):
  """A mirrored variable (one replica: no logical devices needed; three,
  against the split reference, in tests/guarantees/test_distribute.py)
  trains compact through a small variable mirrored too, made with the spec;
  `spec.apply_gradients` in `strategy.run`."""
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  with strategy.scope():
    x = tf.Variable(X0, name="x_mirrored")
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
  spec = tfpartial.train_only(x, index, compact=True)
  frozen = spec.frozen_mask(x)

  @tf.function
  def step():
    strategy.run(lambda: spec.apply_gradients(
        optimizer, [(tf.ones_like(X0), x)]))

  step()
  helpers.assert_same_bits(x.numpy()[frozen], X0[frozen], "frozen")
  helpers.assert_same_bits(x.numpy()[~frozen],
                           X0[~frozen] - np.float32(0.5), "trained")


def test_compact_under_a_strategy_needs_its_small_variable_before_run():
  """A spec bound inside `strategy.run` (loaded without variables) would
  make its small variable there: a ValueError naming the variable, before
  anything changes."""
  strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
  with strategy.scope():
    x = tf.Variable(X0, name="x_late")
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.5)
  spec = tfpartial.load_spec('{"x_late": {"train_only": "1:", '
                             '"compact": true}}')

  @tf.function
  def step():
    strategy.run(lambda: spec.apply_gradients(
        optimizer, [(tf.ones_like(X0), x)]))

  with pytest.raises(ValueError, match=r"the small variable of "
                     r"`compact=True` for variable 'x_late' of shape \(3, 4\) "
                     r"would be made inside `strategy.run`"):
    step()
  helpers.assert_same_bits(x.numpy(), X0, "x after the refused step")


def test_compact_elements_of_a_variable_of_2_31_elements_or_more_refused():
  """Elements are found by int32 offsets: a variable too large for them is
  refused before any mask its size is made. No variable of 2**31 elements
  is allocated: the check reads the shape it is given."""
  from tfpartial._frozen import _value  # pylint: disable=g-import-not-at-top
  small = tf.Variable(tf.zeros([1, 1]), name="big")
  with pytest.raises(ValueError, match=r"fewer than 2\*\*31 elements"):
    _value._static(small, (2**16, 2**15), np.s_[:, 0], trains=True,
                   compact=True)
  # Whole rows have no such limit: row numbers are int64.
  rows = _value._static(small, (2**16, 2**15), np.s_[5:], trains=True,
                        compact=True)
  assert rows.compact and rows.row_set is not None


def test_the_compiled_scatter_writes_no_variable_of_another_task():
  """A parameter server's shard (another task, which may not have loaded
  the library) is written by TensorFlow's scatter; a CPU variable of this
  process by the compiled one. Where the variable is, not the variable,
  decides: stand-ins with a device and a dtype."""
  from tfpartial._step import _compact  # pylint: disable=g-import-not-at-top

  class Placed:

    def __init__(self, device):
      self.device, self.dtype = device, tf.float32

  assert _compact._scatters(Placed("/job:localhost/replica:0/task:0/"
                                   "device:CPU:0"))
  assert _compact._scatters(Placed(""))
  assert not _compact._scatters(Placed("/job:ps/replica:0/task:1/"
                                       "device:CPU:0"))
  assert not _compact._scatters(Placed("/job:localhost/replica:0/task:0/"
                                       "device:GPU:0"))
