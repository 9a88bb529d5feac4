"""The compiled kernel for v1 Adam in a TF1 graph (`_fused_adam`, `_native`).

Where it can serve a step, the step uses it and restores nothing; with it
or without it (`TFPARTIAL_KERNELS=off`) a step leaves the same bits in the
variable and in Adam's slots, whatever the gradient holds where frozen.
The freeze and graph-versus-eager guarantees are tested for it with every
other optimizer, in test_conformance.py; its build and cache in
test_native.py.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._kernels import _native

pytestmark = pytest.mark.usefixtures("compiled_kernel")

KERNELS = {True: "TfpartialResourceApplyAdam", False: "TfpartialApplyAdam"}
SHAPE = (6, 5)
ELEMENTS = np.random.default_rng(3).random(SHAPE) < 0.4


def _spec(kind, x, runner):
  if kind == "elements":
    return tfpartial.freeze(x, ELEMENTS)
  if kind == "rows":
    return tfpartial.freeze(x, np.s_[1:4])
  if kind == "train_only_rows":
    return tfpartial.train_only(x, [0, 5])
  mask = runner.variable(ELEMENTS, "mask", dtype=tf.bool, trainable=False)
  return tfpartial.freeze(x, mask)


def _frozen(kind):
  if kind in ("elements", "dynamic"):
    return ELEMENTS
  frozen = np.zeros(SHAPE, bool)
  if kind == "rows":
    frozen[1:4] = True
  else:
    frozen[1:5] = True
  return frozen


def _train(mode, kind, dtype, kernels_on, monkeypatch, steps=4):
  """Runs `steps` v1 Adam steps; returns (op types, x, m, v, x before)."""
  monkeypatch.setenv(_native.SWITCH, "on" if kernels_on else "off")
  rng = np.random.default_rng(7)
  frozen = _frozen(kind)
  # The gradient is `scale`: Inf and NaN where frozen, which the update
  # must never read.
  scale = rng.normal(size=SHAPE)
  scale[frozen & (rng.random(SHAPE) < 0.5)] = np.nan
  scale[frozen & (rng.random(SHAPE) < 0.3)] = -np.inf
  with mode.runner() as runner:
    x = runner.variable(rng.normal(size=SHAPE), "x", dtype=dtype)
    spec = _spec(kind, x, runner)
    optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
    loss = tf.reduce_sum(x * tf.constant(scale, dtype))
    run = runner.step(lambda: spec.minimize(optimizer, loss))
    types = {op.type for op in runner.session.graph.get_operations()}
    # Adam state from before the freeze (a restored checkpoint), nonzero
    # where frozen too: the kernel must decay it as ApplyAdam does. Some
    # of it subnormal in float32, where flush-to-zero settings would show.
    for name in ("m", "v"):
      state = np.abs(rng.normal(size=SHAPE))
      state[0, :3] = [1e-39, 3e-41, 1.2e-38]
      runner.assign(optimizer.get_slot(x, name), state)
    before = runner.value(x)
    for _ in range(steps):
      run()
    m, v = (runner.value(optimizer.get_slot(x, name)) for name in ("m", "v"))
    return types, runner.value(x), m, v, before


@pytest.mark.parametrize("kind",
                         ["elements", "rows", "train_only_rows", "dynamic"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=str)
def test_the_kernel_leaves_the_bits_the_unfused_step_leaves(
    graph_mode, kind, dtype, monkeypatch):
  types, *fused = _train(graph_mode, kind, dtype, True, monkeypatch)
  assert KERNELS[graph_mode.use_resource] in types
  unfused_types, *unfused = _train(graph_mode, kind, dtype, False,
                                   monkeypatch)
  assert KERNELS[graph_mode.use_resource] not in unfused_types
  for name, got, expected in zip(("x", "m", "v"), fused, unfused):
    helpers.assert_same_bits(got, expected, name)
  x, _, _, before = fused
  frozen = _frozen(kind)
  helpers.assert_same_bits(x[frozen], before[frozen], "frozen x")
  assert np.isfinite(x).all() and (x[~frozen] != before[~frozen]).all()


def test_a_step_with_the_kernel_has_no_adam_op_and_no_restore(
    graph_mode, monkeypatch):
  types, *_ = _train(graph_mode, "elements", tf.float32, True, monkeypatch,
                     steps=1)
  assert {"ApplyAdam", "ResourceApplyAdam", "Select"}.isdisjoint(types)


def test_a_subclass_of_adam_keeps_the_unfused_step(graph_mode):
  class MyAdam(tf.compat.v1.train.AdamOptimizer):
    pass

  with graph_mode.runner() as runner:
    x = runner.variable(np.ones(SHAPE), "x")
    spec = tfpartial.freeze(x, ELEMENTS)
    run = runner.step(lambda: spec.minimize(MyAdam(0.1), tf.reduce_sum(x)))
    run()
    types = {op.type for op in runner.session.graph.get_operations()}
    assert not set(KERNELS.values()) & types
    assert "Select" in types


def test_under_a_distribution_strategy_the_step_stays_unfused(graph_mode):
  with graph_mode.runner() as runner:
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
      x = runner.variable(np.ones(SHAPE), "x")
      spec = tfpartial.freeze(x, ELEMENTS)
      optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
      run = runner.step(lambda: strategy.run(
          lambda: spec.minimize(optimizer, tf.reduce_sum(x))))
    run()
    types = {op.type for op in runner.session.graph.get_operations()}
    assert not set(KERNELS.values()) & types
    value = runner.value(x)
    ones = np.ones(SHAPE, np.float32)
    helpers.assert_same_bits(value[ELEMENTS], ones[ELEMENTS], "frozen x")
    assert (value[~ELEMENTS] != 1.0).all()


def test_a_wrapped_adam_uses_the_kernel_and_is_left_as_it_was(graph_mode):
  with graph_mode.runner() as runner:
    x = runner.variable(np.ones(SHAPE), "x")
    optimizer = tfpartial.freeze(x, ELEMENTS).wrap(
        tf.compat.v1.train.AdamOptimizer(0.1))
    run = runner.step(lambda: optimizer.minimize(tf.reduce_sum(x)))
    run()
    types = {op.type for op in runner.session.graph.get_operations()}
    assert KERNELS[graph_mode.use_resource] in types
    # The kernel is swapped in only while the step is built.
    assert "_resource_apply_dense" not in vars(optimizer)
    assert "_apply_dense" not in vars(optimizer)
