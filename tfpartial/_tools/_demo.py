"""`tfpartial demo`: the two classic questions, and the workarounds beside them.

Everything printed is computed when the demo runs, on this machine.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple, Union

import keras
import numpy as np
from numpy.typing import ArrayLike
import tensorflow as tf

from tfpartial._api import _make
from tfpartial._frozen import _compat
from tfpartial._frozen._types import Optimizer, Variable

V1 = tf.compat.v1.train

# One training step; returns the train op in a TF1 graph (what the
# optimizer's apply returns, so Any), anything eagerly.
Step = Callable[[], Any]
# A variable class: `tf.Variable` or `tf.compat.v1.Variable`.
MakeVariable = Callable[..., tf.Variable]
LossOf = Callable[[tf.Tensor], tf.Tensor]
# A hand-made workaround: (x, keep, optimizer, loss) -> one step.
Workaround = Callable[[Variable, tf.Tensor, Optimizer, LossOf], Step]
# (optimizer factory, loss, unfrozen warm-up steps, assign between).
Scenario = Tuple[Callable[[], Optimizer], LossOf, int, bool]
# (steps taken, x[0], where x[0] must be), step by step.
Points = List[Tuple[int, float, float]]


class _Question(Protocol):
  """Builds a question's variable and its training step."""

  def __call__(self, make_variable: MakeVariable,
               graph: bool) -> Tuple[Variable, Step]: ...


def _bits(value: ArrayLike) -> np.ndarray:
  return np.ascontiguousarray(value, dtype=np.float32).view(np.uint32)


def _run_modes(build: _Question, steps: int) -> Dict[str, np.ndarray]:
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


def _question_one(make_variable: MakeVariable,
                  graph: bool) -> Tuple[Variable, Step]:
  x = make_variable([1.0, 2.0], name="x")
  spec = _make.freeze(x, 0)
  optimizer = V1.GradientDescentOptimizer(0.1)
  loss: Callable[[], tf.Tensor] = lambda: tf.reduce_sum(tf.square(x - 5.0))
  return x, lambda: spec.minimize(optimizer, loss() if graph else loss)


def _question_two(make_variable: MakeVariable,
                  graph: bool) -> Tuple[Variable, Step]:
  w = make_variable([[1.0, 2.0], [3.0, 4.0]], name="w")
  spec = _make.train_only(w, np.eye(2, dtype=bool))
  optimizer = V1.AdamOptimizer(0.1)
  loss: Callable[[], tf.Tensor] = lambda: tf.reduce_sum(
      tf.square(tf.matmul(w, [[1.0], [1.0]]) - 9.0))
  return w, lambda: spec.minimize(optimizer, loss() if graph else loss)


def _print_question(title: str, setup: str, results: Dict[str, np.ndarray],
                    initial: np.ndarray, frozen: np.ndarray,
                    show: Callable[[np.ndarray], str]) -> None:
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


def _grads_times_mask(x: Variable, keep: tf.Tensor, optimizer: Optimizer,
                      loss: LossOf) -> Step:
  def step() -> None:
    with tf.GradientTape() as tape:
      value = loss(x)
    grad = tape.gradient(value, x)
    optimizer.apply_gradients([(grad * keep, x)])
  return step


def _stop_gradient_mix(x: Variable, keep: tf.Tensor, optimizer: Optimizer,
                       loss: LossOf) -> Step:
  def step() -> None:
    with tf.GradientTape() as tape:
      value = loss(keep * x + (1.0 - keep) * tf.stop_gradient(x))
    optimizer.apply_gradients([(tape.gradient(value, x), x)])
  return step


def _shadow_and_assign(x: Variable, keep: tf.Tensor, optimizer: Optimizer,
                       loss: LossOf) -> Step:
  # The TF1 answer: a non-trainable copy, written back after each update.
  shadow = tf.Variable(tf.boolean_mask(x, keep == 0.0), trainable=False)
  frozen_at = np.argwhere(keep == 0.0)

  def step() -> None:
    with tf.GradientTape() as tape:
      value = loss(x)
    optimizer.apply_gradients([(tape.gradient(value, x), x)])
    x.assign(tf.tensor_scatter_nd_update(tf.convert_to_tensor(x), frozen_at,
                                         shadow))
  return step


def _tfpartial(x: Variable, keep: tf.Tensor, optimizer: Optimizer,
               loss: LossOf) -> Step:
  spec = _make.freeze(x, keep == 0.0)

  def step() -> None:
    with tf.GradientTape() as tape:
      value = loss(x)
    spec.apply_gradients(optimizer, [(tape.gradient(value, x), x)])
  return step


WORKAROUNDS: Dict[str, Workaround] = {
    "grads * mask": _grads_times_mask,
    "stop_gradient mix": _stop_gradient_mix,
    "shadow + assign": _shadow_and_assign,
    "tfpartial": _tfpartial,
}


def _target_loss(x: tf.Tensor) -> tf.Tensor:
  return tf.reduce_sum(tf.square(x - 4.0))


def _inf_loss(x: tf.Tensor) -> tf.Tensor:
  # d/dx sqrt(x - 1) is Inf at x = 1, where the frozen x[0] sits.
  return _target_loss(x) + tf.sqrt(x[0] - 1.0)


# name -> (optimizer factory, loss, unfrozen warm-up steps, assign between).
SCENARIOS: Dict[str, Scenario] = {
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


STEPS = 6  # Frozen steps per scenario; the restore comes before step 4.


def trajectory(workaround: Workaround, scenario: Scenario) -> Points:
  """x[0] step by step: (steps taken, its value, where it must be).

  The first point is the value the freeze starts from; a restore between
  steps adds a point at the same step count, after the new value.
  """
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
  points = [(0, expected, expected)]
  for index in range(STEPS):
    if assign_between and index == STEPS // 2:  # E.g. a checkpoint restored.
      x.assign([7.0, 7.0, 7.0])
      expected = 7.0
      points.append((index, expected, expected))
    step()
    points.append((index + 1, float(x.numpy()[0]), expected))
  return points


def _frozen_drift(points: Points) -> float:
  """How far x[0] ends from where it must be (0.0 when the freeze held)."""
  _, value, expected = points[-1]
  return abs(value - expected)


def _cell(drift: float) -> str:
  if np.isnan(drift):
    return "NaN"
  return "held" if drift == 0.0 else f"{drift:.3g}"


def trajectories() -> Dict[str, Dict[str, Points]]:
  """Scenario -> workaround -> the frozen x[0], step by step."""
  return {scenario: {name: trajectory(method, SCENARIOS[scenario])
                     for name, method in WORKAROUNDS.items()}
          for scenario in SCENARIOS}


def workaround_table(runs: Dict[str, Dict[str, Points]]
                     ) -> Dict[str, List[float]]:
  """Workaround -> how far the frozen element drifted, per scenario."""
  return {name: [_frozen_drift(runs[scenario][name]) for scenario in SCENARIOS]
          for name in WORKAROUNDS}


def main(plot: Optional[str] = None) -> int:
  """Prints the demo; returns the exit status (0 when every freeze held).

  Args:
    plot: a PNG file to draw the workarounds' drift into (needs matplotlib).
  """
  folder = os.path.dirname(os.path.abspath(plot)) if plot else None
  if folder and not os.path.isdir(folder):
    print(f"tfpartial demo: error: --plot {plot}: there is no folder {folder}",
          file=sys.stderr)
    return 2
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
  for results, given, frozen in ((q1, [1.0, 2.0], [True, False]),
                                  (q2, initial, ~np.eye(2, dtype=bool))):
    start = np.asarray(given, np.float32)
    ok &= all(np.array_equal(_bits(v[frozen]), _bits(start[frozen]))
              for v in results.values())

  print("3. Hand-made workarounds: how far the frozen x[0] drifted "
        "(eager, 6 steps)")
  runs = trajectories()
  table = workaround_table(runs)
  names = list(SCENARIOS)
  print(f"   {'':<18}" + "".join(f"{n:>12}" for n in names))
  for method, drifts in table.items():
    print(f"   {method:<18}" + "".join(f"{_cell(d):>12}" for d in drifts))
  print("   * momentum built up before part of x froze.  ** x assigned "
        "(as by a\n     checkpoint restore) between steps: the new x[0] "
        "must stay.  AdamW is\n     Keras', weight_decay=0.5; the others "
        "are tf.compat.v1.train's.")
  ok &= all(d == 0.0 for d in table["tfpartial"])
  if plot:
    draw(runs, plot)
    print(f"\n4. The same, step by step, drawn in {plot}")
  return 0 if ok else 1


# --- The picture (`--plot`) ------------------------------------------------

PLOT_METADATA = "tfpartial-drift"  # The PNG text chunk holding the numbers.
_PANELS = {  # Scenario -> panel title; SGD, which every answer holds, is left out.
    "Momentum*": "Momentum 0.9, built up before the freeze",
    "Ftrl l1": "FTRL, l1 = 0.5",
    "Proximal l2": "Proximal gradient descent, l2 = 0.5",
    "AdamW": "Keras AdamW, weight_decay = 0.5",
    "Inf grad": "SGD, an Inf gradient at x[0]",
    "assign**": "Adam, x restored to 7 before step 4",
}
# Workaround -> line style; the first two give the same values.
_STYLES: Dict[str, Dict[str, Union[str, float]]] = {
    "grads * mask": dict(color="#d62728", marker="o", linestyle="-"),
    "stop_gradient mix": dict(color="#ff7f0e", marker="x", linestyle="--",
                              markersize=9),
    "shadow + assign": dict(color="#9467bd", marker="s", linestyle="-.",
                            markerfacecolor="none", markersize=8),
    "tfpartial": dict(color="#2ca02c", marker="D", linestyle="-",
                      linewidth=2.5, markersize=5),
}


def draw(runs: Dict[str, Dict[str, Points]], path: str) -> None:
  """Draws each workaround's frozen x[0] step by step, one panel a scenario."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")  # Files only: no display needed.
  from matplotlib import pyplot  # pylint: disable=g-import-not-at-top

  figure, axes = pyplot.subplots(2, 3, figsize=(13, 7.5), dpi=100)
  for axis, (scenario, title) in zip(axes.flat, _PANELS.items()):
    must = runs[scenario]["tfpartial"]
    axis.plot([p[0] for p in must], [p[2] for p in must], color="#bbbbbb",
              linewidth=9, solid_capstyle="butt", label="where x[0] must be")
    nan_notes = []
    for name, points in runs[scenario].items():
      steps, values = [p[0] for p in points], [p[1] for p in points]
      axis.plot(steps, values, label=name, **_STYLES[name])
      first_nan = next((s for s, v in zip(steps, values) if v != v), None)
      if first_nan is not None:
        nan_notes.append(f"{name}: NaN from step {first_nan} on")
    if nan_notes:
      axis.text(0.5, 0.25, "\n".join(nan_notes), transform=axis.transAxes,
                ha="center", va="center", color="#d62728", fontsize=10,
                bbox=dict(facecolor="white", edgecolor="#d62728"))
    axis.set_title(title, fontsize=11)
    axis.set_xlabel("steps since the freeze")
    axis.set_ylabel("x[0]")
    axis.set_xticks(range(STEPS + 1))
    axis.grid(alpha=0.3)
  handles, labels = axes.flat[0].get_legend_handles_labels()
  figure.legend(handles, labels, loc="lower center", ncol=5, fontsize=10,
                frameon=False)
  figure.suptitle("The \"frozen\" x[0] of x = [1, 2, 3] under each "
                  "hand-made workaround and under tfpartial\n"
                  "(eager, tf.compat.v1.train optimizers but AdamW; "
                  "grads * mask and stop_gradient mix give the same values)",
                  fontsize=12)
  figure.tight_layout(rect=(0, 0.05, 1, 0.95))
  numbers = {scenario: {name: [[s, v, e] for s, v, e in points]
                        for name, points in by_name.items()}
             for scenario, by_name in runs.items()}
  figure.savefig(path, format="png", metadata={
      PLOT_METADATA: json.dumps(numbers, allow_nan=True)})
  pyplot.close(figure)
