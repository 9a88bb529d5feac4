"""The compiled kernels for gradient descent and momentum (`_fused_sgd`,
`_fused_keras`, `_kernels/sgd.h`).

Keras 3's SGD (plain, momentum, Nesterov, weight decay) where the Keras
kernel serves (eager, `tf.function` without XLA, `model.fit`, on CPU), and
v1 `GradientDescentOptimizer` / `MomentumOptimizer` in a TF1 graph: with
the kernel and without it (`TFPARTIAL_KERNELS=off`) a step leaves the same
bits in the variable and in the momentum slot, whatever the gradient holds
where frozen, and with momentum already nonzero there.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._kernels import _native

pytestmark = pytest.mark.usefixtures("compiled_kernel")

SHAPE = (6, 5)
ELEMENTS = np.random.default_rng(3).random(SHAPE) < 0.4


def _frozen(kind):
  if kind == "elements":
    return ELEMENTS
  frozen = np.zeros(SHAPE, bool)
  frozen[1:4] = True
  return frozen


def _spec(kind, x):
  return tfpartial.freeze(x, ELEMENTS if kind == "elements" else np.s_[1:4])


def _gradient(rng, frozen, dtype):
  """Random, with NaN and -Inf where frozen: never to be read there."""
  scale = rng.normal(size=SHAPE)
  scale[frozen & (rng.random(SHAPE) < 0.5)] = np.nan
  scale[frozen & (rng.random(SHAPE) < 0.3)] = -np.inf
  return tf.constant(scale, dtype)


# --- Keras 3 SGD -----------------------------------------------------------

KERAS_KERNELS = ("TfpartialResourceApplyKerasSgd",
                 "TfpartialResourceApplyKerasMomentum")
KERAS_SGD = {
    "plain": dict(learning_rate=0.05),
    "momentum": dict(learning_rate=0.05, momentum=0.9),
    "nesterov": dict(learning_rate=0.05, momentum=0.9, nesterov=True),
    "nesterov_decay": dict(learning_rate=0.05, momentum=0.9, nesterov=True,
                           weight_decay=0.1),
    "plain_decay": dict(learning_rate=0.05, weight_decay=0.1),
    "schedule": dict(momentum=0.5),
}


def _keras_sgd(name):
  import keras  # pylint: disable=g-import-not-at-top
  options = dict(KERAS_SGD[name])
  if name == "schedule":
    options["learning_rate"] = keras.optimizers.schedules.ExponentialDecay(
        0.05, 1, 0.5)
  return keras.optimizers.SGD(**options)


def _op_by_op():
  # As test_fused_keras: Grappler's arithmetic optimizer off, so that the
  # unfused step in a tf.function computes Keras' ops one by one.
  from test_fused_keras import _op_by_op as op_by_op  # pylint: disable=g-import-not-at-top
  return op_by_op()


def _train_keras(name, kind, mode, dtype, kernels, monkeypatch, steps=3):
  monkeypatch.setenv(_native.SWITCH, kernels)
  rng = np.random.default_rng(11)
  frozen = _frozen(kind)
  start = rng.normal(size=SHAPE)
  x = tf.Variable(start, dtype=dtype, name="x")
  spec = _spec(kind, x)
  optimizer = _keras_sgd(name)
  optimizer.build([x])
  slots = list(optimizer.momentums)
  for slot in slots:  # Momentum from before the freeze, also where frozen.
    state = rng.normal(size=SHAPE)
    state[0, :3] = [1e-39, 3e-41, 1.2e-38]  # Subnormal in float32.
    slot.assign(tf.constant(state, dtype))
  gradients = [_gradient(rng, frozen, dtype) for _ in range(steps)]

  def step(gradient):
    spec.apply_gradients(optimizer, [(gradient, x)])

  run = mode.function(step) if mode.function else step
  with _op_by_op():
    for gradient in gradients:
      run(gradient)
  types = set()
  if mode.function:
    graph = run.get_concrete_function(gradients[0]).graph
    types = {op.type for op in graph.get_operations()}
  before = tf.constant(start, dtype).numpy()
  return types, x.numpy(), [s.numpy() for s in slots], before


@helpers.needs_keras_3
@pytest.mark.parametrize("name", sorted(KERAS_SGD))
@pytest.mark.parametrize("kind", ["elements", "rows"])
@pytest.mark.parametrize("mode", helpers.TF2_MODES, ids=str)
def test_keras_sgd_kernel_leaves_the_bits_the_unfused_step_leaves(
    name, kind, mode, monkeypatch):
  dtype = tf.float64 if name == "momentum" else tf.float32
  types, x, slots, before = _train_keras(name, kind, mode, dtype, "on",
                                         monkeypatch)
  if mode.function:
    assert set(KERAS_KERNELS) & types
    assert {"Select", "SelectV2"}.isdisjoint(types)
  unfused_types, ux, uslots, _ = _train_keras(name, kind, mode, dtype, "off",
                                              monkeypatch)
  assert not set(KERAS_KERNELS) & unfused_types
  helpers.assert_same_bits(x, ux, "x")
  assert len(slots) == len(uslots) == (0 if "momentum" not in
                                        KERAS_SGD[name] else 1)
  for got, expected in zip(slots, uslots):
    helpers.assert_same_bits(got, expected, "momentum")
  frozen = _frozen(kind)
  helpers.assert_same_bits(x[frozen], before[frozen], "frozen x")
  assert np.isfinite(x).all() and (x[~frozen] != before[~frozen]).all()


@helpers.needs_keras_3
@pytest.mark.parametrize("name", ["plain", "nesterov_decay"])
@pytest.mark.parametrize("mode", helpers.KERAS_LOOP_AND_FIT, ids=str)
def test_keras_sgd_kernel_in_every_keras_mode(name, mode, monkeypatch):
  import keras_problems as kp  # pylint: disable=g-import-not-at-top

  def train(kernels):
    monkeypatch.setenv(_native.SWITCH, kernels)
    model = kp.PartialModel()  # x's frozen gradients are Inf and NaN.
    optimizer = _keras_sgd(name)
    with _op_by_op():
      trajectory = kp.train(model, optimizer, model.spec(), mode)
    return trajectory, [np.array(v.numpy()) for v in optimizer.variables
                        if len(v.shape) > 0]

  fused, fused_slots = train("on")
  unfused, unfused_slots = train("off")
  assert len(fused) == len(unfused) == 4
  for step, (got, expected) in enumerate(zip(fused, unfused), start=1):
    for variable in expected:
      helpers.assert_same_bits(got[variable], expected[variable],
                               f"{variable}, step {step}")
  assert len(fused_slots) == len(unfused_slots)
  for got, expected in zip(fused_slots, unfused_slots):
    helpers.assert_same_bits(got, expected, "momentum")


def _keras_step_types(optimizer, jit_compile=False, constraint=None):
  import keras  # pylint: disable=g-import-not-at-top
  x = keras.Variable(np.ones((4, 3), np.float32), name="x")
  x.constraint = constraint
  return helpers.diagonal_step_types(x, optimizer, jit_compile=jit_compile)


@helpers.needs_keras_3
@pytest.mark.parametrize("case", ["xla", "clipnorm", "ema", "subclass",
                                  "constraint"])
def test_where_the_keras_sgd_kernel_cannot_serve_the_step_stays_unfused(case):
  import keras  # pylint: disable=g-import-not-at-top

  class MySGD(keras.optimizers.SGD):
    pass

  optimizer = {
      "clipnorm": lambda: keras.optimizers.SGD(0.1, clipnorm=1.0),
      "ema": lambda: keras.optimizers.SGD(0.1, use_ema=True),
      "subclass": lambda: MySGD(0.1, momentum=0.9),
  }.get(case, lambda: keras.optimizers.SGD(0.1, momentum=0.9))()
  types = _keras_step_types(
      optimizer, jit_compile=case == "xla",
      constraint=keras.constraints.NonNeg() if case == "constraint" else None)
  assert not set(KERAS_KERNELS) & types
  assert "Select" in types


@helpers.needs_keras_3
def test_a_keras_sgd_step_with_the_kernel_has_no_keras_update():
  import keras  # pylint: disable=g-import-not-at-top
  types = _keras_step_types(keras.optimizers.SGD(0.1, momentum=0.9,
                                                 weight_decay=0.1))
  assert "TfpartialResourceApplyKerasMomentum" in types
  assert {"Select", "SelectV2", "AssignSubVariableOp"}.isdisjoint(types)


# --- v1 GradientDescent / Momentum in a TF1 graph --------------------------

V1 = {
    "gd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.compat.v1.train.MomentumOptimizer(
        0.1, 0.9, use_nesterov=True),
}
V1_KERNELS = {
    ("gd", True): "TfpartialResourceApplyGradientDescent",
    ("gd", False): "TfpartialApplyGradientDescent",
    ("momentum", True): "TfpartialResourceApplyMomentum",
    ("momentum", False): "TfpartialApplyMomentum",
}
V1_STOCK = {"ApplyGradientDescent", "ResourceApplyGradientDescent",
            "ApplyMomentum", "ResourceApplyMomentum"}


def _v1_kernel(name, mode):
  return V1_KERNELS["gd" if name == "gd" else "momentum",
                    mode.use_resource]


def _train_v1(mode, name, kind, dtype, kernels_on, monkeypatch, steps=4):
  monkeypatch.setenv(_native.SWITCH, "on" if kernels_on else "off")
  rng = np.random.default_rng(7)
  frozen = _frozen(kind)
  scale = rng.normal(size=SHAPE)
  scale[frozen & (rng.random(SHAPE) < 0.5)] = np.nan
  scale[frozen & (rng.random(SHAPE) < 0.3)] = -np.inf
  with mode.runner() as runner:
    x = runner.variable(rng.normal(size=SHAPE), "x", dtype=dtype)
    spec = _spec(kind, x)
    optimizer = V1[name]()
    loss = tf.reduce_sum(x * tf.constant(scale, dtype))
    run = runner.step(lambda: spec.minimize(optimizer, loss))
    types = {op.type for op in runner.session.graph.get_operations()}
    slot = optimizer.get_slot(x, "momentum")
    if slot is not None:  # Momentum from before the freeze, where frozen too.
      state = rng.normal(size=SHAPE)
      state[0, :3] = [1e-39, 3e-41, 1.2e-38]
      runner.assign(slot, state)
    before = runner.value(x)
    for _ in range(steps):
      run()
    accum = runner.value(slot) if slot is not None else None
    return types, runner.value(x), accum, before


@pytest.mark.parametrize("name", sorted(V1))
@pytest.mark.parametrize("kind", ["elements", "rows"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=str)
def test_v1_kernel_leaves_the_bits_the_unfused_step_leaves(
    graph_mode, name, kind, dtype, monkeypatch):
  types, x, accum, before = _train_v1(graph_mode, name, kind, dtype, True,
                                      monkeypatch)
  kernel = _v1_kernel(name, graph_mode)
  assert kernel in types
  assert {"Select", "SelectV2"}.isdisjoint(types) and not V1_STOCK & types
  unfused_types, ux, uaccum, _ = _train_v1(graph_mode, name, kind, dtype,
                                           False, monkeypatch)
  assert kernel not in unfused_types
  helpers.assert_same_bits(x, ux, "x")
  if name != "gd":
    helpers.assert_same_bits(accum, uaccum, "momentum")
  frozen = _frozen(kind)
  helpers.assert_same_bits(x[frozen], before[frozen], "frozen x")
  assert np.isfinite(x).all() and (x[~frozen] != before[~frozen]).all()


@pytest.mark.parametrize("name", ["gd", "momentum"])
def test_a_v1_subclass_keeps_the_unfused_step(graph_mode, name):
  base = type(V1[name]())

  class Mine(base):
    pass

  with graph_mode.runner() as runner:
    x = runner.variable(np.ones(SHAPE), "x")
    spec = tfpartial.freeze(x, ELEMENTS)
    optimizer = (Mine(0.1) if name == "gd" else Mine(0.1, 0.9))
    run = runner.step(lambda: spec.minimize(optimizer, tf.reduce_sum(x)))
    run()
    types = {op.type for op in runner.session.graph.get_operations()}
    assert not set(V1_KERNELS.values()) & types
    assert "Select" in types


def test_v1_under_a_distribution_strategy_the_step_stays_unfused(graph_mode):
  with graph_mode.runner() as runner:
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
      x = runner.variable(np.ones(SHAPE), "x")
      spec = tfpartial.freeze(x, ELEMENTS)
      optimizer = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
      run = runner.step(lambda: strategy.run(
          lambda: spec.minimize(optimizer, tf.reduce_sum(x))))
    run()
    types = {op.type for op in runner.session.graph.get_operations()}
    assert not set(V1_KERNELS.values()) & types
    value = runner.value(x)
    ones = np.ones(SHAPE, np.float32)
    helpers.assert_same_bits(value[ELEMENTS], ones[ELEMENTS], "frozen x")


def test_a_wrapped_v1_momentum_uses_the_kernel(graph_mode):
  with graph_mode.runner() as runner:
    x = runner.variable(np.ones(SHAPE), "x")
    optimizer = tfpartial.freeze(x, ELEMENTS).wrap(
        tf.compat.v1.train.MomentumOptimizer(0.1, 0.9))
    run = runner.step(lambda: optimizer.minimize(tf.reduce_sum(x)))
    run()
    types = {op.type for op in runner.session.graph.get_operations()}
    assert _v1_kernel("momentum", graph_mode) in types
    assert "_resource_apply_dense" not in vars(optimizer)
    assert "_apply_dense" not in vars(optimizer)


# --- Mostly frozen: the trainable elements' offsets -----------------------

BIG = (40, 30)
MOSTLY = np.random.default_rng(5).random(BIG) < 0.95  # About 60 train.


def _mostly_spec(kind, x):
  if kind == "elements":
    return tfpartial.freeze(x, MOSTLY)
  return tfpartial.train_only(x, [3, 17])


def _mostly_frozen(kind):
  if kind == "elements":
    return MOSTLY
  frozen = np.ones(BIG, bool)
  frozen[[3, 17]] = False
  return frozen


def _frozen_inputs(graph):
  """The dtype of the `frozen` input of every tfpartial SGD op."""
  return [op.get_attr("Tfrozen") for op in graph.get_operations()
          if op.type.startswith("Tfpartial") and "Tfrozen" in op.node_def.attr]


def _force_mask(monkeypatch, form):
  from tfpartial._kernels import _inputs  # pylint: disable=g-import-not-at-top
  if form == "mask":
    monkeypatch.setattr(_inputs, "mostly_frozen", lambda selection: False)


@pytest.mark.parametrize("kind", ["elements", "rows"])
@pytest.mark.parametrize("name", ["gd", "momentum"])
def test_v1_mostly_frozen_takes_offsets_only_without_a_slot(
    graph_mode, kind, name, monkeypatch):
  results = {}
  for form in ("offsets", "mask", "off"):
    monkeypatch.undo()
    monkeypatch.setenv(_native.SWITCH, "off" if form == "off" else "on")
    _force_mask(monkeypatch, form)
    rng = np.random.default_rng(1)
    frozen = _mostly_frozen(kind)
    scale = rng.normal(size=BIG)
    scale[frozen & (rng.random(BIG) < 0.5)] = np.nan
    scale[frozen & (rng.random(BIG) < 0.3)] = np.inf
    with graph_mode.runner() as runner:
      x = runner.variable(rng.normal(size=BIG), "x")
      spec = _mostly_spec(kind, x)
      optimizer = V1[name]()
      loss = tf.reduce_sum(x * tf.constant(scale, tf.float32))
      run = runner.step(lambda: spec.minimize(optimizer, loss))
      inputs = _frozen_inputs(runner.session.graph)
      before = runner.value(x)
      for _ in range(3):
        run()
      results[form] = runner.value(x)
    if form == "offsets":
      # Only the slot-less kernel takes offsets; momentum's moves frozen
      # elements' slot too, so it keeps the mask.
      assert inputs == [tf.int32 if name == "gd" else tf.bool]
    elif form == "mask" and name == "gd":
      assert inputs == [tf.bool]
    helpers.assert_same_bits(results[form][frozen], before[frozen],
                             f"frozen x, {form}")
  helpers.assert_same_bits(results["offsets"], results["off"], "x, offsets")
  helpers.assert_same_bits(results["mask"], results["off"], "x, mask")
  assert (results["off"][~_mostly_frozen(kind)] != before[
      ~_mostly_frozen(kind)]).all()


@helpers.needs_keras_3
@pytest.mark.parametrize("kind", ["elements", "rows"])
@pytest.mark.parametrize("name", ["plain", "plain_decay", "momentum"])
@pytest.mark.parametrize("mode", helpers.TF2_MODES, ids=str)
def test_keras_mostly_frozen_takes_offsets_only_without_momentum(
    kind, name, mode, monkeypatch):
  results = {}
  for form in ("offsets", "mask", "off"):
    monkeypatch.undo()
    monkeypatch.setenv(_native.SWITCH, "off" if form == "off" else "on")
    _force_mask(monkeypatch, form)
    rng = np.random.default_rng(2)
    frozen = _mostly_frozen(kind)
    start = rng.normal(size=BIG).astype(np.float32)
    x = tf.Variable(start, name="x")
    spec = _mostly_spec(kind, x)
    optimizer = _keras_sgd(name)
    gradients = [_gradient_big(rng, frozen) for _ in range(3)]

    def step(gradient):
      spec.apply_gradients(optimizer, [(gradient, x)])

    run = mode.function(step) if mode.function else step
    with _op_by_op():
      for gradient in gradients:
        run(gradient)
    if mode.function:
      inputs = _frozen_inputs(run.get_concrete_function(gradients[0]).graph)
      if form == "offsets":
        assert inputs == ([tf.int32] if "momentum" not in KERAS_SGD[name]
                          else [])
      elif form == "mask" and "momentum" not in KERAS_SGD[name]:
        assert inputs == [tf.bool]
    results[form] = x.numpy()
    helpers.assert_same_bits(results[form][frozen], start[frozen],
                             f"frozen x, {form}")
  helpers.assert_same_bits(results["offsets"], results["off"], "x, offsets")
  helpers.assert_same_bits(results["mask"], results["off"], "x, mask")


def _gradient_big(rng, frozen):
  scale = rng.normal(size=BIG)
  scale[frozen & (rng.random(BIG) < 0.5)] = np.nan
  scale[frozen & (rng.random(BIG) < 0.3)] = -np.inf
  return tf.constant(scale, tf.float32)


def test_the_mostly_frozen_choice_follows_the_counts():
  """Offsets when fewer than 1/8 of the elements train."""
  from tfpartial._kernels import _inputs  # pylint: disable=g-import-not-at-top
  from tfpartial._frozen import _selection  # pylint: disable=g-import-not-at-top
  x = tf.Variable(np.zeros((16, 8), np.float32))
  assert _inputs.mostly_frozen(helpers.selection_of(tfpartial.train_only(x, [1]), x))
  assert not _inputs.mostly_frozen(
      helpers.selection_of(tfpartial.train_only(x, [1, 2]), x))
  mask = np.ones((16, 8), bool)
  mask.reshape(-1)[[0, 5, 100]] = False
  selection = helpers.selection_of(tfpartial.freeze(x, mask), x)
  assert _inputs.mostly_frozen(selection)
  np.testing.assert_array_equal(_selection.trainable_offsets(selection),
                                [0, 5, 100])
  assert _selection.trainable_offsets(selection).dtype == np.int32
  rows = helpers.selection_of(tfpartial.train_only(x, [2]), x)
  np.testing.assert_array_equal(_selection.trainable_offsets(rows),
                                np.arange(16, 24))


@pytest.mark.parametrize("offsets", [[3, 2], [0, 0], [-1], [30], [[1]]])
def test_offsets_that_do_not_rise_in_range_are_refused(offsets):
  library = _native.library()
  x = tf.Variable(np.zeros(30, np.float32))
  with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
    library.tfpartial_resource_apply_gradient_descent(
        x.handle, tf.constant(0.1), tf.ones(30), tf.constant(offsets,
                                                               tf.int32))
  helpers.assert_same_bits(x.numpy(), np.zeros(30, np.float32), "x")


# --- Large masks, packed one bit per element (v1 kernels, TF1 graphs) -------

# Not a multiple of 8 elements, and more than one unpacked chunk (4,096).
PACKED_SHAPE = (97, 61)
V1_AND_ADAM = {**V1, "adam": lambda: tf.compat.v1.train.AdamOptimizer(0.1)}


def _kernel_masks(graph):
  """The dtypes of the masks the graph's tfpartial kernels take."""
  return [op.inputs[-1].dtype for op in graph.get_operations()
          if op.type.startswith("TfpartialApply")
          or op.type.startswith("TfpartialResourceApply")]


@pytest.mark.parametrize("name", sorted(V1_AND_ADAM))
def test_v1_kernels_take_a_large_mask_packed_and_leave_the_same_bits(
    graph_mode, name, monkeypatch):
  """From `_inputs.PACKED_FROM` elements a v1 kernel takes the element mask
  as bits (uint8, an eighth of a bool mask's bytes, which a TF1 graph
  holds and copies): the same bits as the unfused step, NaN where frozen."""
  from tfpartial._kernels import _inputs  # pylint: disable=g-import-not-at-top
  frozen = np.random.default_rng(5).random(PACKED_SHAPE) < 0.5

  def train(kernels, packed_from):
    monkeypatch.setenv(_native.SWITCH, kernels)
    monkeypatch.setattr(_inputs, "PACKED_FROM", packed_from)
    rng = np.random.default_rng(9)
    scale = rng.normal(size=PACKED_SHAPE)
    scale[frozen & (rng.random(PACKED_SHAPE) < 0.5)] = np.nan
    with graph_mode.runner() as runner:
      x = runner.variable(rng.normal(size=PACKED_SHAPE), "x")
      spec = tfpartial.freeze(x, frozen)
      loss = tf.reduce_sum(x * tf.constant(scale, tf.float32))
      run = runner.step(lambda: spec.minimize(V1_AND_ADAM[name](), loss))
      masks = _kernel_masks(runner.session.graph)
      before = runner.value(x)
      for _ in range(3):
        run()
      return masks, runner.value(x), before

  masks, x, before = train("on", packed_from=frozen.size)
  assert masks == [tf.uint8]
  bool_masks, bx, _ = train("on", packed_from=frozen.size + 1)
  assert bool_masks == [tf.bool]
  unfused, ux, _ = train("off", packed_from=frozen.size)
  assert unfused == []
  helpers.assert_same_bits(x, ux, "x, packed mask")
  helpers.assert_same_bits(bx, ux, "x, bool mask")
  helpers.assert_same_bits(x[frozen], before[frozen], "frozen x")
  assert np.isfinite(x).all() and (x[~frozen] != before[~frozen]).all()


@pytest.mark.parametrize("size", [3, 5, 0])
def test_a_packed_mask_of_another_size_is_refused(size):
  library = _native.library()
  x = tf.Variable(np.zeros(30, np.float32))  # 30 bits: 4 bytes.
  with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
    library.tfpartial_resource_apply_gradient_descent(
        x.handle, tf.constant(0.1), tf.ones(30), tf.zeros([size], tf.uint8))
  helpers.assert_same_bits(x.numpy(), np.zeros(30, np.float32), "x")
