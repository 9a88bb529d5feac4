"""The v1 optimizers' compiled kernels in TF2 code (`_fused_adam`,
`_fused_sgd`).

Code migrating from TF1 often keeps `tf.compat.v1.train` optimizers and
runs them eagerly or in a `tf.function`. There the kernels of v1 Adam,
GradientDescent and Momentum serve as in a TF1 graph: with the kernel and
without it (`TFPARTIAL_KERNELS=off`) a step leaves the same bits in the
variable and in every slot, whatever the gradient holds where frozen and
whatever the slots held there; a spy counts that the kernel made the
update; XLA, which cannot compile a custom op, keeps the unfused step.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._families import _fused_adam
from tfpartial._families import _fused_sgd
from tfpartial._kernels import _inputs
from tfpartial._kernels import _native

pytestmark = pytest.mark.usefixtures("compiled_kernel")

SHAPE = (6, 5)
ELEMENTS = np.random.default_rng(3).random(SHAPE) < 0.4
STEPS = 4

V1 = {
    "gd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.compat.v1.train.MomentumOptimizer(
        0.1, 0.9, use_nesterov=True),
    "adam": lambda: tf.compat.v1.train.AdamOptimizer(0.01),
}
SLOTS = {"gd": (), "momentum": ("momentum",), "nesterov": ("momentum",),
         "adam": ("m", "v")}


def _frozen(kind):
  if kind == "elements":
    return ELEMENTS
  frozen = np.zeros(SHAPE, bool)
  frozen[1:4] = True
  return frozen


def _spy(monkeypatch):
  """The variables the v1 kernels updated (or traced an update of)."""
  updated = []
  for module in (_fused_adam, _fused_sgd):
    original = module._update

    def update(optimizer, grad, var, *rest, original=original):
      updated.append(var.name)
      return original(optimizer, grad, var, *rest)

    monkeypatch.setattr(module, "_update", update)
  return updated


def _train(mode, name, kind, dtype, kernels, monkeypatch, how="apply"):
  """x after each step and the slots at the end, with the kernels on or
  off; how many updates the kernel made."""
  monkeypatch.setenv(_native.SWITCH, kernels)
  updated = _spy(monkeypatch)
  rng = np.random.default_rng(7)
  frozen = _frozen(kind)
  scale = rng.normal(size=SHAPE)
  scale[frozen & (rng.random(SHAPE) < 0.5)] = np.nan
  scale[frozen & (rng.random(SHAPE) < 0.3)] = -np.inf
  with mode.runner() as runner:
    x = runner.variable(rng.normal(size=SHAPE), "x", dtype=dtype)
    spec = tfpartial.freeze(x, frozen)
    optimizer = V1[name]()
    if how == "wrap":
      optimizer = spec.wrap(optimizer)

    def loss():
      return tf.reduce_sum(x * tf.constant(scale, dtype))

    def step():
      if how == "minimize":
        return spec.minimize(optimizer, loss)
      if how == "wrap":
        return optimizer.minimize(loss)
      grads = runner.gradients(loss, [x])
      return spec.apply_gradients(optimizer, zip(grads, [x]))

    run = runner.step(step)
    run()  # Makes the slots; then they get values, subnormal ones too.
    slots = [optimizer.get_slot(x, slot) for slot in SLOTS[name]]
    for slot in slots:
      state = rng.normal(size=SHAPE) ** 2
      state[0, :3] = [1e-39, 3e-41, 1.2e-38]
      runner.assign(slot, state)
    before = runner.value(x)
    trajectory = []
    for _ in range(STEPS):
      run()
      trajectory.append(runner.value(x))
    helpers.assert_same_bits(trajectory[-1][frozen], before[frozen],
                             "frozen x")
    assert np.isfinite(trajectory[-1]).all()
    assert (trajectory[-1][~frozen] != before[~frozen]).all()
    return trajectory, [runner.value(slot) for slot in slots], len(updated)


@pytest.mark.parametrize("name", sorted(V1))
@pytest.mark.parametrize("kind", ["elements", "rows"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=str)
def test_v1_kernels_in_tf2_leave_the_bits_the_unfused_step_leaves(
    tf2_mode, name, kind, dtype, monkeypatch):
  mode = tf2_mode
  fused, fused_slots, kernel_updates = _train(mode, name, kind, dtype, "on",
                                              monkeypatch)
  unfused, unfused_slots, none = _train(mode, name, kind, dtype, "off",
                                        monkeypatch)
  assert kernel_updates > 0 and none == 0
  for step, (got, expected) in enumerate(zip(fused, unfused), start=1):
    helpers.assert_same_bits(got, expected, f"x, step {step}")
  assert len(fused_slots) == len(SLOTS[name])
  for slot, got, expected in zip(SLOTS[name], fused_slots, unfused_slots):
    helpers.assert_same_bits(got, expected, slot)


@pytest.mark.parametrize("how", ["minimize", "wrap"])
@pytest.mark.parametrize("name", ["momentum", "adam"])
def test_v1_minimize_and_wrap_in_tf2_use_the_kernel(tf2_mode, name, how,
                                                    monkeypatch):
  mode = tf2_mode
  fused, fused_slots, kernel_updates = _train(
      mode, name, "elements", tf.float32, "on", monkeypatch, how)
  unfused, unfused_slots, none = _train(
      mode, name, "elements", tf.float32, "off", monkeypatch, how)
  assert kernel_updates > 0 and none == 0
  helpers.assert_same_bits(fused[-1], unfused[-1], "x")
  for slot, got, expected in zip(SLOTS[name], fused_slots, unfused_slots):
    helpers.assert_same_bits(got, expected, slot)


def _step_types(optimizer, jit_compile, monkeypatch):
  monkeypatch.setenv(_native.SWITCH, "on")
  x = tf.Variable(tf.ones([4, 3]))
  return helpers.diagonal_step_types(x, optimizer, jit_compile=jit_compile)


@pytest.mark.parametrize("name", sorted(V1))
def test_in_a_function_the_v1_step_is_the_kernel_alone(name, monkeypatch):
  types = _step_types(V1[name](), False, monkeypatch)
  assert any(t.startswith("Tfpartial") for t in types)
  assert {"Select", "SelectV2"}.isdisjoint(types)
  assert not {t for t in types if t.startswith("ResourceApply")}


@pytest.mark.parametrize("name", sorted(V1))
def test_under_xla_the_v1_step_stays_unfused(name, monkeypatch):
  types = _step_types(V1[name](), True, monkeypatch)
  assert not any(t.startswith("Tfpartial") for t in types)
  assert {t for t in types if t.startswith("ResourceApply")}


def test_a_v1_subclass_in_tf2_keeps_the_unfused_step(monkeypatch):

  class Mine(tf.compat.v1.train.MomentumOptimizer):
    pass

  types = _step_types(Mine(0.1, 0.9), False, monkeypatch)
  assert not any(t.startswith("Tfpartial") for t in types)
  assert "ResourceApplyMomentum" in types


@pytest.mark.parametrize("name", ["gd", "momentum", "adam"])
def test_in_tf2_a_large_mask_is_not_packed(name, monkeypatch):
  """Eagerly a mask tensor shares the selection's memory: packing it would
  add a copy and unpacking cost time, so only TF1 graphs pack."""
  monkeypatch.setenv(_native.SWITCH, "on")
  monkeypatch.setattr(_inputs, "PACKED_FROM", 8)
  monkeypatch.setattr(_inputs, "mostly_frozen", lambda selection: False)
  x = tf.Variable(tf.ones([4, 3]))
  spec = tfpartial.freeze(x, np.eye(4, 3, dtype=bool))
  optimizer = V1[name]()

  @tf.function
  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(x * x)
    spec.apply_gradients(optimizer, [(tape.gradient(loss, x), x)])

  step()
  graph = step.get_concrete_function().graph
  frozen = [op.get_attr("Tfrozen") for op in graph.get_operations()
            if op.type.startswith("Tfpartial")]
  assert frozen == [tf.bool]
