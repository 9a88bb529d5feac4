"""`tfpartial demo`: the two classic questions, and the workarounds beside them.

Everything printed is computed when the demo runs, on this machine.
"""

from __future__ import annotations

from typing import Callable, Dict, List

import keras
import numpy as np
import tensorflow as tf

from tfpartial import _compat
from tfpartial import _spec

V1 = tf.compat.v1.train


def _bits(value) -> np.ndarray:
  return np.ascontiguousarray(value, dtype=np.float32).view(np.uint32)


def _run_modes(build: Callable, steps: int) -> Dict[str, np.ndarray]:
  """Runs `build(variable_factory) -> (variable, step)` in three modes."""
  results = {}
  with tf.Graph().as_default():
    variable, step = build(tf.compat.v1.Variable, graph=True)
    train_op = step()
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      for _ in range(steps):
        session.run(train_op)
      results["TF1 Session"] = session.run(variable)
  variable, step = build(tf.Variable, graph=False)
  for _ in range(steps):
    step()
  results["TF2 eager"] = variable.numpy()
  variable, step = build(tf.Variable, graph=False)
  function = tf.function(lambda: step() and None)  # Returns no Operation.
  for _ in range(steps):
    function()
  results["tf.function"] = variable.numpy()
  return results


def _question_one(make_variable, graph):
  x = make_variable([1.0, 2.0], name="x")
  spec = _spec.freeze(x, 0)
  optimizer = V1.GradientDescentOptimizer(0.1)
  loss = lambda: tf.reduce_sum(tf.square(x - 5.0))
  return x, lambda: spec.minimize(optimizer, loss() if graph else loss)


def _question_two(make_variable, graph):
  w = make_variable([[1.0, 2.0], [3.0, 4.0]], name="w")
  spec = _spec.train_only(w, np.eye(2, dtype=bool))
  optimizer = V1.AdamOptimizer(0.1)
  loss = lambda: tf.reduce_sum(tf.square(tf.matmul(w, [[1.0], [1.0]]) - 9.0))
  return w, lambda: spec.minimize(optimizer, loss() if graph else loss)


def _print_question(title, setup, results, initial, frozen, show):
  print(title)
  print(f"   {setup}")
  print(f"   {'mode':<13} {'result':<34} frozen bits unchanged")
  first = next(iter(results.values()))
  for mode, value in results.items():
    held = np.array_equal(_bits(value[frozen]), _bits(initial[frozen]))
    print(f"   {mode:<13} {show(value):<34} {'yes' if held else 'NO'}")
  same = all(np.array_equal(_bits(v), _bits(first)) for v in results.values())
  print(f"   bit-identical in all three modes: {'yes' if same else 'NO'}\n")


# --- Hand-made workarounds, as they are written in the wild ---------------


def _grads_times_mask(x, keep, optimizer, loss):
  def step():
    with tf.GradientTape() as tape:
      value = loss(x)
    grad = tape.gradient(value, x)
    optimizer.apply_gradients([(grad * keep, x)])
  return step


def _stop_gradient_mix(x, keep, optimizer, loss):
  def step():
    with tf.GradientTape() as tape:
      value = loss(keep * x + (1.0 - keep) * tf.stop_gradient(x))
    optimizer.apply_gradients([(tape.gradient(value, x), x)])
  return step


def _shadow_and_assign(x, keep, optimizer, loss):
  # The TF1 answer: a non-trainable copy, written back after each update.
  shadow = tf.Variable(tf.boolean_mask(x, keep == 0.0), trainable=False)
  frozen_at = np.argwhere(keep == 0.0)

  def step():
    with tf.GradientTape() as tape:
      value = loss(x)
    optimizer.apply_gradients([(tape.gradient(value, x), x)])
    x.assign(tf.tensor_scatter_nd_update(tf.convert_to_tensor(x), frozen_at,
                                         shadow))
  return step


def _tfpartial(x, keep, optimizer, loss):
  spec = _spec.freeze(x, keep == 0.0)

  def step():
    with tf.GradientTape() as tape:
      value = loss(x)
    spec.apply_gradients(optimizer, [(tape.gradient(value, x), x)])
  return step


WORKAROUNDS = {
    "grads * mask": _grads_times_mask,
    "stop_gradient mix": _stop_gradient_mix,
    "shadow + assign": _shadow_and_assign,
    "tfpartial": _tfpartial,
}


def _target_loss(x):
  return tf.reduce_sum(tf.square(x - 4.0))


def _inf_loss(x):
  # d/dx sqrt(x - 1) is Inf at x = 1, where the frozen x[0] sits.
  return _target_loss(x) + tf.sqrt(x[0] - 1.0)


# name -> (optimizer factory, loss, unfrozen warm-up steps, assign between).
SCENARIOS = {
    "SGD": (lambda: V1.GradientDescentOptimizer(0.1), _target_loss, 0, False),
    "Momentum*": (lambda: V1.MomentumOptimizer(0.1, 0.9), _target_loss, 3,
                  False),
    "Ftrl l1": (lambda: V1.FtrlOptimizer(
        0.1, l1_regularization_strength=0.5), _target_loss, 0, False),
    "Proximal l2": (lambda: V1.ProximalGradientDescentOptimizer(
        0.1, l2_regularization_strength=0.5), _target_loss, 0, False),
    "AdamW": (lambda: keras.optimizers.AdamW(0.1, weight_decay=0.5),
              _target_loss, 0, False),
    "Inf grad": (lambda: V1.GradientDescentOptimizer(0.1), _inf_loss, 0,
                 False),
    "assign**": (lambda: V1.AdamOptimizer(0.1), _target_loss, 0, True),
}


def _frozen_drift(workaround, scenario) -> float:
  """How far x[0] ends from where it must be (0.0 when the freeze held)."""
  make_optimizer, loss, warmup, assign_between = scenario
  optimizer = make_optimizer()
  variable = (keras.Variable if _compat.KERAS_3 and isinstance(
      optimizer, keras.optimizers.Optimizer) else tf.Variable)
  x = variable([1.0, 2.0, 3.0], name="x")
  keep = tf.constant([0.0, 1.0, 1.0])
  for _ in range(warmup):  # Trained as a whole before part of it froze.
    with tf.GradientTape() as tape:
      value = loss(x)
    optimizer.apply_gradients([(tape.gradient(value, x), x)])
  step = workaround(x, keep, optimizer, loss)
  expected = float(x.numpy()[0])
  for index in range(6):
    if assign_between and index == 3:  # E.g. a checkpoint restored.
      x.assign([7.0, 7.0, 7.0])
      expected = 7.0
    step()
  return abs(float(x.numpy()[0]) - expected)


def _cell(drift: float) -> str:
  if np.isnan(drift):
    return "NaN"
  return "held" if drift == 0.0 else f"{drift:.3g}"


def workaround_table() -> Dict[str, List[float]]:
  """Workaround -> how far the frozen element drifted, per scenario."""
  return {name: [_frozen_drift(method, scenario)
                 for scenario in SCENARIOS.values()]
          for name, method in WORKAROUNDS.items()}


def main() -> int:
  """Prints the demo; returns the exit status (0 when every freeze held)."""
  print(f"tfpartial demo, TensorFlow {tf.__version__}\n")
  ok = True
  q1 = _run_modes(_question_one, steps=100)
  _print_question(
      "1. Fix x[0] at its initial value while the rest trains",
      "x = [1, 2], loss = sum((x - 5)^2), GradientDescent(0.1), 100 steps",
      q1, np.array([1.0, 2.0], np.float32), np.array([True, False]),
      lambda v: f"x = [{v[0]:.6g}, {v[1]:.6g}]")
  q2 = _run_modes(_question_two, steps=200)
  initial = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
  _print_question(
      "2. Train only w[0,0] and w[1,1] of a 2x2 variable",
      "w = [[1, 2], [3, 4]], loss = sum((w @ [1, 1] - 9)^2), Adam(0.1), "
      "200 steps", q2, initial, ~np.eye(2, dtype=bool),
      lambda v: f"w = [[{v[0, 0]:.4g}, {v[0, 1]:.4g}], "
                f"[{v[1, 0]:.4g}, {v[1, 1]:.4g}]]")
  for results, initial, frozen in ((q1, [1.0, 2.0], [True, False]),
                                    (q2, initial, ~np.eye(2, dtype=bool))):
    initial = np.asarray(initial, np.float32)
    ok &= all(np.array_equal(_bits(v[frozen]), _bits(initial[frozen]))
              for v in results.values())

  print("3. Hand-made workarounds: how far the frozen x[0] drifted "
        "(eager, 6 steps)")
  table = workaround_table()
  names = list(SCENARIOS)
  print(f"   {'':<18}" + "".join(f"{n:>12}" for n in names))
  for method, drifts in table.items():
    print(f"   {method:<18}" + "".join(f"{_cell(d):>12}" for d in drifts))
  print("   * momentum built up before part of x froze.  ** x assigned "
        "(as by a\n     checkpoint restore) between steps: the new x[0] "
        "must stay.  AdamW is\n     Keras 3's, weight_decay=0.5; the others "
        "are tf.compat.v1.train's.")
  ok &= all(d == 0.0 for d in table["tfpartial"])
  return 0 if ok else 1
