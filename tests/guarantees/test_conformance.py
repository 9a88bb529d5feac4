"""Guarantees 1, 2 and 3 for every tf.compat.v1.train optimizer and entry point.

Each test runs in every mode through the `mode` fixture. The gradients of
the frozen elements are Inf and NaN throughout: they must leave no trace.
"""

import numpy as np
import pytest

import helpers
import problems
from problems import B0, C0, X0, X_FROZEN

STEPS = 4


def _train(mode, name, entry, steps=STEPS):
  """Trains the problem under its spec; values after each step + reference."""
  make = problems.V1_OPTIMIZERS[name]
  with mode.runner() as runner:
    model = problems.Model.build(runner)
    spec = model.spec()
    optimizer = make(model.global_step)
    run = runner.step(
        problems.steps_for(entry, runner, spec, optimizer, model))
    trajectory = []
    for _ in range(steps):
      run()
      trajectory.append([runner.value(v) for v in model.variables])
    slots = {name: {slot for slot in optimizer.get_slot_names()
                    if optimizer.get_slot(variable, slot) is not None}
             for name, variable in (("x", model.x), ("b", model.b))}
    reference = problems.split_reference(runner, make, steps)
  return trajectory, reference, slots


def _tolerance(mode):
  # Element-wise kernels on a smaller variable: float32 round-off at most;
  # XLA may fuse the two differently.
  return dict(rtol=2e-5, atol=1e-6) if mode is helpers.XLA else dict(
      rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("entry", problems.ENTRIES)
@pytest.mark.parametrize("name", sorted(problems.V1_OPTIMIZERS))
def test_freeze_is_exact_and_training_faithful(mode, name, entry):
  trajectory, reference, slots = _train(mode, name, entry)
  for step, ((x, b, c), (t_ref, c_ref)) in enumerate(
      zip(trajectory, reference), start=1):
    helpers.assert_same_bits(x[X_FROZEN], X0[X_FROZEN], f"x frozen, step {step}")
    helpers.assert_same_bits(b, B0, f"b (fully frozen), step {step}")
    assert np.isfinite(x).all() and np.isfinite(c).all(), step
    np.testing.assert_allclose(x[~X_FROZEN], t_ref, **_tolerance(mode),
                               err_msg=f"x trainable, step {step}")
    np.testing.assert_allclose(c, c_ref, **_tolerance(mode),
                               err_msg=f"c, step {step}")
  x, _, c = trajectory[-1]
  assert not np.array_equal(x[~X_FROZEN], X0[~X_FROZEN]), "x did not train"
  assert not np.array_equal(c, C0), "c did not train"
  if entry.startswith("wrap"):  # A plain run's checkpoint layout.
    assert slots["b"] == slots["x"], slots
  else:  # Fully frozen b is left out of the update.
    assert not slots["b"], f"fully frozen b got optimizer slots {slots}"


@pytest.mark.parametrize("name", sorted(problems.V1_OPTIMIZERS))
def test_every_mode_gives_the_same_bits(name):
  runs = {mode.name: _train(mode, name, "apply_gradients")[0]
          for mode in helpers.EXACT_MODES}
  first_name, first = next(iter(runs.items()))
  for other_name, other in runs.items():
    for step, (expected, actual) in enumerate(zip(first, other), start=1):
      for variable, e, a in zip("xbc", expected, actual):
        helpers.assert_same_bits(
            a, e, f"{other_name} vs {first_name}: {variable}, step {step}")
