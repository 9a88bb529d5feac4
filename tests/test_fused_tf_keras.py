"""The Keras Adam kernel for Keras 2's Adam and AdamW (`_fused_tf_keras`).

Where it serves (eager, `tf.function`, a wrapped optimizer, `model.fit`, on
CPU), a step leaves the same bits in the model's variables and in `m` and
`v` as the unfused step (`TFPARTIAL_KERNELS=off`), whatever the gradient
holds where frozen (NaN and Inf: `problems.poisoned`); where it cannot,
the step stays unfused. Runs with `tf_keras` (TensorFlow 2.16 and later,
when installed) or `keras` 2 (TensorFlow 2.15), as `test_tf_keras.py`.
"""

import inspect

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial import _fused_tf_keras
from tfpartial import _native
from test_fused_keras import _op_by_op
from test_tf_keras import K, L, MODES, STEPS, _Model, _train

pytestmark = pytest.mark.usefixtures("compiled_kernel")

KERNEL = "TfpartialResourceApplyKerasAdam"
ADAPTIVE = "adaptive_epsilon" in inspect.signature(K.Adam.__init__).parameters

OPTIMIZERS = {
    "Adam": lambda: K.Adam(0.05),
    "AdamW": lambda: K.AdamW(0.05, weight_decay=0.2),
    "AdamW_schedule": lambda: K.AdamW(
        K.schedules.ExponentialDecay(0.05, 1, 0.5), weight_decay=0.1,
        beta_1=0.8, epsilon=1e-3),
}
if ADAPTIVE:
  OPTIMIZERS["Adam_adaptive_epsilon"] = lambda: K.Adam(
      0.05, epsilon=1e-3, adaptive_epsilon=True)


def _run(name, mode, kernels, monkeypatch):
  """The values after each step, the slots, and how many variable updates
  the kernel made (or traced)."""
  monkeypatch.setenv(_native.SWITCH, kernels)
  updates = []
  original = _fused_tf_keras._update

  def update(*args):
    updates.append(args[2].name)
    return original(*args)

  monkeypatch.setattr(_fused_tf_keras, "_update", update)
  model, optimizer = _Model(), OPTIMIZERS[name]()
  with _op_by_op():
    trajectory = _train(model, optimizer, model.spec(), mode)
  slots = [np.array(v.numpy()) for v in optimizer.variables()
           if len(v.shape) > 0]
  return trajectory, slots, len(updates)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("mode", MODES)
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


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_a_step_with_the_kernel_has_no_keras_update(name):
  types = _step_types(OPTIMIZERS[name]())
  assert KERNEL in types
  assert {"Select", "SelectV2", "AssignSubVariableOp"}.isdisjoint(types)


class _MyAdam(K.Adam):
  pass


@pytest.mark.parametrize("case", ["amsgrad", "ema", "clipnorm", "subclass",
                                  "legacy", "sparse"])
def test_where_the_kernel_cannot_serve_the_step_stays_unfused(case):
  optimizer = {
      "amsgrad": lambda: K.Adam(0.1, amsgrad=True),
      "ema": lambda: K.Adam(0.1, use_ema=True),
      "clipnorm": lambda: K.Adam(0.1, clipnorm=1.0),
      "subclass": lambda: _MyAdam(0.1),
      "legacy": lambda: L.Adam(0.1),
      "sparse": lambda: K.Adam(0.1),
  }[case]()
  gradient = None
  if case == "sparse":  # Keras 2's sparse update is another computation.
    gradient = lambda x: tf.IndexedSlices(tf.ones([2, 3]),
                                          tf.constant([0, 3]),
                                          tf.constant([4, 3]))
  types = _step_types(optimizer, gradient)
  assert KERNEL not in types
  assert "Select" in types or "SelectV2" in types
