"""Guarantee 4: values the user writes between steps are the values kept.

The freeze protects frozen elements from the optimizer, never from the
user: an `assign`, a checkpoint restore, or pretrained weights loaded after
the spec was built all become the new frozen values; no stale snapshot
ever comes back.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import problems
from problems import X0, X_FROZEN

# Optimizers whose zero-gradient update still moves weights, or carries
# state: the ones a stale snapshot or a missed restore would show in.
MOVERS = ("Momentum", "Adam", "Ftrl_shrinkage", "ProximalGradientDescent",
          "RMSProp_centered_momentum")


def _frozen(runner, model):
  return runner.value(model.x)[X_FROZEN]


def _trainer(runner, name):
  """The problem's model and its step under the spec, via apply_gradients."""
  model = problems.Model.build(runner)
  optimizer = problems.V1_OPTIMIZERS[name](model.global_step)
  return model, runner.step(problems.steps_for(
      "apply_gradients", runner, model.spec(), optimizer, model))


@pytest.mark.parametrize("name", MOVERS)
def test_assign_between_steps_is_kept(mode, name):
  with mode.runner() as runner:
    model, run = _trainer(runner, name)
    pretrained = X0 * 3.0 - 1.0  # Loaded after the spec was built.
    runner.assign(model.x, pretrained)
    run()
    run()
    helpers.assert_same_bits(_frozen(runner, model), pretrained[X_FROZEN],
                             "pretrained values loaded after the spec")
    written = runner.value(model.x) + 7.0
    written[0, 0] = np.nan  # A frozen element the user sets to NaN stays NaN.
    runner.assign(model.x, written)
    for _ in range(2):
      run()
      helpers.assert_same_bits(_frozen(runner, model), written[X_FROZEN],
                               "values assigned between steps")


@pytest.mark.parametrize("name", MOVERS)
def test_checkpoint_restore_between_steps_is_kept(mode, name, tmp_path):
  with mode.runner() as runner:
    model, run = _trainer(runner, name)
    checkpoint = runner.checkpoint({"x": model.x}, tmp_path)
    run()
    runner.assign(model.x, runner.value(model.x) - 5.0)
    saved = runner.value(model.x)
    path = checkpoint.save()
    run()
    runner.assign(model.x, np.full(X0.shape, 123.0))  # Then thrown away.
    run()
    checkpoint.restore(path)
    helpers.assert_same_bits(runner.value(model.x), saved, "restored")
    run()
    run()
    helpers.assert_same_bits(_frozen(runner, model), saved[X_FROZEN],
                             "frozen values after training on from a restore")


@pytest.mark.parametrize("name", ("Momentum", "Adam",
                                  "RMSProp_centered_momentum"))
def test_state_from_unfrozen_steps_does_not_move_frozen_elements(mode, name):
  """Momentum built up before the freeze would drift a masked-only element."""
  with mode.runner() as runner:
    model = problems.Model.build(runner)
    optimizer = problems.V1_OPTIMIZERS[name](model.global_step)

    def unfrozen():
      grads = runner.gradients(lambda: model.loss(poison=False),
                               model.variables)
      return optimizer.apply_gradients(zip(grads, model.variables))

    partial = problems.steps_for("apply_gradients", runner, model.spec(),
                                 optimizer, model)
    run_free, run_partial = runner.step(unfrozen), runner.step(partial)
    run_free()
    run_free()
    at_freeze = runner.value(model.x)
    for step in range(3):
      run_partial()
      helpers.assert_same_bits(_frozen(runner, model), at_freeze[X_FROZEN],
                               f"step {step} after the freeze")

