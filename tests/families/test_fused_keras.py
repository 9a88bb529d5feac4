"""The compiled kernel for Keras 3's Adam and AdamW (`_fused_keras`).

Where it can serve a step (eager or `tf.function` without XLA, `model.fit`
on CPU), the step uses it and restores nothing; with it or without it
(`TFPARTIAL_KERNELS=off`) training leaves the same bits in every variable
and in Adam's slots. The freeze and the split reference are tested for it
with every other optimizer, in test_keras.py.
"""

import contextlib

import keras
import numpy as np
import pytest
import tensorflow as tf

import helpers
import keras_problems as kp
import tfpartial
from tfpartial._kernels import _native

pytestmark = [helpers.needs_keras_3,
              pytest.mark.usefixtures("compiled_kernel")]

KERNEL = "TfpartialResourceApplyKerasAdam"
OPTIMIZERS = kp.ADAM_FAMILY


@contextlib.contextmanager
def _op_by_op():
  """Grappler's arithmetic optimizer off: in a tf.function it reassociates
  Keras' weight decay (`variable * wd * lr`), so plain AdamW there differs
  in the last bit of some elements from plain AdamW run op by op, as
  eagerly. The kernel computes as Keras' ops do one by one."""
  tf.config.optimizer.set_experimental_options(
      {"arithmetic_optimization": False})
  try:
    yield
  finally:
    tf.config.optimizer.set_experimental_options(
        {"arithmetic_optimization": True})


def _train(name, mode, kernels, monkeypatch):
  """The values after each step, and the optimizer's slots by path."""
  monkeypatch.setenv(_native.SWITCH, kernels)
  model = kp.PartialModel()  # x's frozen gradients are Inf and NaN.
  optimizer = OPTIMIZERS[name]()
  with _op_by_op():
    trajectory = kp.train(model, optimizer, model.spec(), mode)
  # In the order the optimizer made them; their paths differ between
  # runs (Keras numbers the second model and optimizer).
  slots = [(v.path.rsplit("_", 1)[-1], np.array(v.numpy()))
           for v in optimizer.variables if len(v.shape) > 0]
  return trajectory, slots


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("mode", helpers.KERAS_LOOP_AND_FIT, ids=str)
def test_the_kernel_leaves_the_bits_the_unfused_step_leaves(
    name, mode, monkeypatch):
  fused, fused_slots = _train(name, mode, "on", monkeypatch)
  unfused, unfused_slots = _train(name, mode, "off", monkeypatch)
  assert len(fused) == len(unfused) == 4
  for step, (got, expected) in enumerate(zip(fused, unfused), start=1):
    for variable in expected:
      helpers.assert_same_bits(got[variable], expected[variable],
                               f"{variable}, step {step}")
  assert [kind for kind, _ in fused_slots] == [
      kind for kind, _ in unfused_slots]
  assert {kind for kind, _ in fused_slots} == {"momentum", "velocity"}
  for (kind, got), (_, expected) in zip(fused_slots, unfused_slots):
    helpers.assert_same_bits(got, expected, kind)


def _step_ops(optimizer, jit_compile=False, constraint=None):
  """The op types of one traced tf.function step on a frozen kernel."""
  x = keras.Variable(np.ones((4, 3), np.float32), name="x")
  x.constraint = constraint  # As Layer.add_weight sets it.
  spec = tfpartial.freeze(x, np.eye(4, 3, dtype=bool))

  @tf.function(jit_compile=jit_compile)
  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(x * x)
    spec.apply_gradients(optimizer, zip(tape.gradient(loss, [x]), [x]))

  step()
  helpers.assert_same_bits(x.numpy()[:3, :3].diagonal(),
                           np.ones(3, np.float32), "frozen diagonal")
  assert (x.numpy()[0, 1:] != 1.0).all()
  return {op.type for op in step.get_concrete_function().graph.get_operations()}


def test_a_step_with_the_kernel_has_no_select_and_no_keras_update():
  types = _step_ops(keras.optimizers.AdamW(0.1, weight_decay=0.1))
  assert KERNEL in types
  # No mask, no restore, no weight decay of Keras' (AssignAddVariableOp
  # stays: it counts the iterations).
  assert {"Select", "SelectV2", "AssignSubVariableOp"}.isdisjoint(types)


@pytest.mark.parametrize("case", [
    "xla", "clipnorm", "amsgrad", "ema", "subclass", "constraint",
    "rmsprop"])
def test_where_the_kernel_cannot_serve_the_step_stays_unfused(case):
  optimizer = kp.adam_for(case)
  types = _step_ops(
      optimizer, jit_compile=case == "xla",
      constraint=keras.constraints.NonNeg() if case == "constraint" else None)
  assert KERNEL not in types
  assert "Select" in types


@pytest.mark.parametrize("mode", helpers.TF2_MODES, ids=str)
def test_a_float64_gradient_of_a_float32_variable_is_cast_as_keras_does(
    mode, monkeypatch):
  """Keras takes a float64 gradient for a float32 variable (it casts it);
  so must the kernel, and leave the bits the unfused step leaves."""

  def train(kernels):
    monkeypatch.setenv(_native.SWITCH, kernels)
    rng = np.random.default_rng(5)
    start = rng.normal(size=(6, 5)).astype(np.float32)
    x = tf.Variable(start, name="x")
    frozen = rng.random((6, 5)) < 0.4
    spec = tfpartial.freeze(x, frozen)
    optimizer = keras.optimizers.AdamW(0.05, weight_decay=0.2)
    gradient = tf.constant(rng.normal(size=(6, 5)), tf.float64)

    def step():
      spec.apply_gradients(optimizer, [(gradient, x)])

    run = mode.function(step) if mode.function else step
    with _op_by_op():
      for _ in range(3):
        run()
    types = set()
    if mode.function:
      graph = tf.function(step).get_concrete_function().graph
      types = {op.type for op in graph.get_operations()}
    return start, frozen, x.numpy(), types

  start, frozen, fused, types = train("on")
  if mode.function:
    assert KERNEL in types
  _, _, unfused, _ = train("off")
  helpers.assert_same_bits(fused, unfused, "x, kernel against unfused")
  helpers.assert_same_bits(fused[frozen], start[frozen], "frozen x")


def test_plain_adamw_in_a_function_differs_in_the_last_bits():
  """docs/kernel.md: without tfpartial, Grappler's arithmetic optimizer
  makes AdamW in a tf.function differ from AdamW run eagerly in the last
  bits of some elements, and not with that pass off: why the kernel's
  bits are compared with the unfused step with the pass off."""
  rng = np.random.default_rng(0)
  start = rng.normal(size=4096).astype(np.float32)
  gradients = [tf.constant(rng.normal(size=4096), tf.float32)
               for _ in range(3)]

  def train(run):
    x = tf.Variable(start)
    optimizer = keras.optimizers.AdamW(0.05, weight_decay=0.2)
    step = run(lambda grad: optimizer.apply_gradients([(grad, x)]))
    for grad in gradients:
      step(grad)
    return x.numpy().view(np.int32).astype(np.int64)

  eager = train(lambda f: f)
  ulps = np.abs(train(tf.function) - eager)
  assert 0 < np.count_nonzero(ulps) < eager.size // 4
  assert ulps.max() <= 16
  with _op_by_op():
    assert np.array_equal(train(tf.function), eager)


# --- A tf.IndexedSlices gradient (embedding rows) --------------------------

SPARSE_KERNEL = "TfpartialResourceApplyKerasAdamSparse"
TABLE = (12, 4)


def _sparse_spec(kind, x):
  if kind == "rows":
    return tfpartial.train_only(x, [2, 5, 7, 9])
  mask = np.random.default_rng(8).random(TABLE) < 0.4
  return tfpartial.freeze(x, mask)


def _train_sparse(name, kind, mode, kernels, monkeypatch, index_dtype):
  monkeypatch.setenv(_native.SWITCH, kernels)
  rng = np.random.default_rng(4)
  start = rng.normal(size=TABLE).astype(np.float32)
  x = tf.Variable(start, name="x")
  spec = _sparse_spec(kind, x)
  frozen = np.asarray(_frozen_of(spec, x))
  optimizer = OPTIMIZERS[name]()
  optimizer.build([x])
  # Nonzero state where frozen too, some of it subnormal.
  for slot in optimizer.variables:
    if len(slot.shape) == 2:
      state = np.abs(rng.normal(size=TABLE))
      state[0, :3] = [1e-39, 3e-41, 1.2e-38]
      slot.assign(state.astype(np.float32))
  steps = []
  for _ in range(3):
    # Rows named twice and out of order; NaN and Inf where frozen.
    indices = np.array([5, 2, 5, 0, 9, 2, 11, 5])
    values = rng.normal(size=(len(indices), TABLE[1]))
    values[0, 1] = -0.0
    bad = frozen[indices] & (rng.random(values.shape) < 0.5)
    values[bad] = np.where(rng.random(values.shape) < 0.5, np.nan,
                           np.inf)[bad]
    steps.append((tf.constant(values, tf.float32),
                  tf.constant(indices, index_dtype)))

  def step(values, indices):
    grad = tf.IndexedSlices(values, indices, tf.constant(TABLE, tf.int64))
    spec.apply_gradients(optimizer, [(grad, x)])

  run = mode.function(step) if mode.function else step
  with _op_by_op():
    for values, indices in steps:
      run(values, indices)
  types = set()
  if mode.function:
    graph = run.get_concrete_function(*steps[0]).graph
    types = {op.type for op in graph.get_operations()}
  slots = [np.array(v.numpy()) for v in optimizer.variables
           if len(v.shape) == 2]
  return types, start, frozen, x.numpy(), slots


def _frozen_of(spec, x):
  return helpers.selection_of(spec, x).frozen_mask()


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("kind", ["rows", "elements"])
@pytest.mark.parametrize("mode", helpers.TF2_MODES, ids=str)
@pytest.mark.parametrize("index_dtype", [tf.int32, tf.int64], ids=str)
def test_an_indexed_slices_gradient_gets_the_sparse_kernel_and_the_same_bits(
    name, kind, mode, index_dtype, monkeypatch):
  types, start, frozen, x, slots = _train_sparse(
      name, kind, mode, "on", monkeypatch, index_dtype)
  if mode.function:
    assert SPARSE_KERNEL in types
    assert {"Select", "SelectV2", "UnsortedSegmentSum"}.isdisjoint(types)
  unfused_types, _, _, unfused_x, unfused_slots = _train_sparse(
      name, kind, mode, "off", monkeypatch, index_dtype)
  assert SPARSE_KERNEL not in unfused_types
  helpers.assert_same_bits(x, unfused_x, "x")
  assert len(slots) == len(unfused_slots) == 2
  for got, expected in zip(slots, unfused_slots):
    helpers.assert_same_bits(got, expected, "slot")
  helpers.assert_same_bits(x[frozen], start[frozen], "frozen x")
  assert np.isfinite(x).all()


def test_an_embedding_in_model_fit_gets_the_sparse_kernel(monkeypatch):
  """model.fit hands an Embedding's tf.IndexedSlices gradient to Adam: the
  sparse kernel takes it, with the bits of the unfused step."""
  from tfpartial._families import _fused_keras  # pylint: disable=g-import-not-at-top
  sparse_calls = []
  update = _fused_keras._adam_update

  def spy(optimizer, gradient, taken, learning_rate):
    sparse_calls.append(isinstance(gradient, tf.IndexedSlices))
    return update(optimizer, gradient, taken, learning_rate)

  monkeypatch.setattr(_fused_keras.FusedKerasAdamUpdate, "_fused_update",
                      staticmethod(spy))
  rng = np.random.default_rng(6)
  table = rng.normal(size=TABLE).astype(np.float32)
  inputs = np.array([[5, 2, 5], [0, 9, 2], [11, 5, 5], [2, 2, 7]])
  targets = rng.normal(size=(4, 3, TABLE[1])).astype(np.float32)

  def train(kernels):
    monkeypatch.setenv(_native.SWITCH, kernels)
    model = keras.Sequential([keras.Input((3,), dtype="int32"),
                              keras.layers.Embedding(*TABLE)])
    model.layers[0].embeddings.assign(table)
    embeddings = model.layers[0].embeddings
    spec = tfpartial.train_only(embeddings, [2, 5, 7])
    optimizer = keras.optimizers.AdamW(0.05, weight_decay=0.1)
    model.compile(optimizer=spec.wrap(optimizer), loss="mse")
    with _op_by_op():
      model.fit(inputs, targets, batch_size=2, epochs=2, shuffle=False,
                verbose=0)
    return embeddings.numpy(), [np.array(v.numpy())
                                for v in optimizer.variables
                                if len(v.shape) == 2]

  fused, fused_slots = train("on")
  assert sparse_calls and all(sparse_calls)
  unfused, unfused_slots = train("off")
  helpers.assert_same_bits(fused, unfused, "embeddings")
  for got, expected in zip(fused_slots, unfused_slots):
    helpers.assert_same_bits(got, expected, "slot")
  frozen = np.ones(TABLE[0], bool)
  frozen[[2, 5, 7]] = False
  helpers.assert_same_bits(fused[frozen], table[frozen], "frozen rows")
  assert (fused[~frozen] != table[~frozen]).all()
