"""The Keras kernels for Keras 2's Adam, AdamW and SGD (`_fused_tf_keras`).

Where they serve (eager, `tf.function`, a wrapped optimizer, `model.fit`,
on CPU), a step leaves the same bits in the model's variables and in the
slots as the unfused step (`TFPARTIAL_KERNELS=off`), whatever the gradient
holds where frozen (NaN and Inf: `problems.poisoned`); where it cannot,
the step stays unfused. Runs with `tf_keras` (TensorFlow 2.16 and later,
when installed) or `keras` 2 (TensorFlow 2.15), as `test_tf_keras.py`.
"""

import contextlib
import inspect

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._families import _fused_tf_keras
from tfpartial._kernels import _native
from test_tf_keras import K, L, STEPS, _Model, _train

pytestmark = pytest.mark.usefixtures("compiled_kernel")

KERNELS = ("TfpartialResourceApplyKerasAdam",
           "TfpartialResourceApplyKerasMomentum")
ADAPTIVE = "adaptive_epsilon" in inspect.signature(K.Adam.__init__).parameters

OPTIMIZERS = {
    "Adam": lambda: K.Adam(0.05),
    "AdamW": lambda: K.AdamW(0.05, weight_decay=0.2),
    "AdamW_schedule": lambda: K.AdamW(
        K.schedules.ExponentialDecay(0.05, 1, 0.5), weight_decay=0.1,
        beta_1=0.8, epsilon=1e-3),
}
OPTIMIZERS.update({
    "SGD": lambda: K.SGD(0.05),  # Keras 2 writes the slot at momentum 0.
    "SGD_momentum": lambda: K.SGD(0.05, momentum=0.9),
    "SGD_nesterov_decay": lambda: K.SGD(0.05, momentum=0.9, nesterov=True,
                                        weight_decay=0.1),
})
if ADAPTIVE:
  OPTIMIZERS["Adam_adaptive_epsilon"] = lambda: K.Adam(
      0.05, epsilon=1e-3, adaptive_epsilon=True)


@contextlib.contextmanager
def _op_by_op():
  """As `test_fused_keras._op_by_op`, and Grappler's constant folding off
  too: on TensorFlow 2.15 it simplifies Keras 2 SGD's `-g * lr + m * 0`
  at momentum 0 to `-g * lr`, which is -0 where the sum op by op is +0
  (a zero gradient: frozen). The kernels compute as the ops do one by
  one, as eagerly."""
  options = {"arithmetic_optimization": False, "constant_folding": False}
  tf.config.optimizer.set_experimental_options(options)
  try:
    yield
  finally:
    tf.config.optimizer.set_experimental_options(
        {name: True for name in options})


def _run(name, mode, kernels, monkeypatch):
  """The values after each step, the slots, and how many variable updates
  the kernel made (or traced)."""
  monkeypatch.setenv(_native.SWITCH, kernels)
  updates = []
  for mixin in (_fused_tf_keras.FusedTfKerasAdamUpdate,
                _fused_tf_keras.FusedTfKerasSgdUpdate):
    original = mixin._fused_update

    def update(*args, original=original):
      updates.append(args[2].name)
      return original(*args)

    monkeypatch.setattr(mixin, "_fused_update", staticmethod(update))
  model, optimizer = _Model(), OPTIMIZERS[name]()
  with _op_by_op():
    trajectory = _train(model, optimizer, model.spec(), mode)
  slots = [np.array(v.numpy()) for v in optimizer.variables()
           if len(v.shape) > 0]
  return trajectory, slots, len(updates)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("mode", helpers.KERAS_LOOP_AND_FIT, ids=str)
def test_the_kernel_leaves_the_bits_the_unfused_step_leaves(
    name, mode, monkeypatch):
  fused, fused_slots, kernel_updates = _run(name, mode, "on", monkeypatch)
  unfused, unfused_slots, none = _run(name, mode, "off", monkeypatch)
  assert kernel_updates > 0 and none == 0
  assert len(fused) == len(unfused) == STEPS
  for step, (got, expected) in enumerate(zip(fused, unfused), start=1):
    for variable in expected:
      helpers.assert_same_bits(got[variable], expected[variable],
                               f"{variable}, step {step}")
  assert len(fused_slots) == len(unfused_slots) > 0
  for got, expected in zip(fused_slots, unfused_slots):
    helpers.assert_same_bits(got, expected, "m or v")


def _step_types(optimizer, gradient=None):
  """The op types of one `tf.function` step of `optimizer` under a spec."""
  x = tf.Variable(np.ones((4, 3), np.float32), name="x")
  return helpers.diagonal_step_types(x, optimizer, gradient=gradient)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD_nesterov_decay"])
def test_a_step_with_the_kernel_has_no_keras_update(name):
  types = _step_types(OPTIMIZERS[name]())
  assert KERNELS[name.startswith("SGD")] in types
  assert {"Select", "SelectV2", "AssignSubVariableOp"}.isdisjoint(types)


class _MyAdam(K.Adam):
  pass


# The legacy Adam has v1 Adam's kernel: test_fused_legacy_adam.py.
@pytest.mark.parametrize("case", ["amsgrad", "ema", "clipnorm", "subclass",
                                  "sparse", "legacy_sgd", "sparse_sgd"])
def test_where_the_kernel_cannot_serve_the_step_stays_unfused(case):
  optimizer = {
      "amsgrad": lambda: K.Adam(0.1, amsgrad=True),
      "ema": lambda: K.Adam(0.1, use_ema=True),
      "clipnorm": lambda: K.Adam(0.1, clipnorm=1.0),
      "subclass": lambda: _MyAdam(0.1),
      "sparse": lambda: K.Adam(0.1),
      "legacy_sgd": lambda: L.SGD(0.1, momentum=0.9),
      "sparse_sgd": lambda: K.SGD(0.1, momentum=0.9),
  }[case]()
  gradient = None
  if case.startswith("sparse"):  # Keras 2's sparse update is another computation.
    gradient = lambda x: tf.IndexedSlices(tf.ones([2, 3]),
                                          tf.constant([0, 3]),
                                          tf.constant([4, 3]))
  types = _step_types(optimizer, gradient)
  assert not set(KERNELS) & types
  assert "Select" in types or "SelectV2" in types
