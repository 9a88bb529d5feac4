"""Every documented way of stepping a compact spec, in every family and mode.

`spec.apply_gradients` and `spec.minimize` with a plain or a wrapped
optimizer, the wrapped optimizer's own `minimize` / `compute_gradients` /
`apply_gradients` / `apply`, and `compile` + `fit`: each trains
`train_only(table, rows, compact=True)` (`compact_problem.py`, repeated
ids) exactly as the split-variable reference, with state only for the rows
that train. Once `spec.apply_gradients(spec.wrap(optimizer), ...)` failed
for a compact spec: the step handed the wrapped optimizer the small
variable, which its spec does not name; and a Keras 2 optimizer built on
the table (as Keras asks under a strategy) did not know the small one.
"""

import contextlib
import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

import compact_problem as cp
import helpers
import tfpartial

KIND = "rows"


def _tf_keras():
  if helpers.KERAS_3:
    return pytest.importorskip("tf_keras",
                               reason="the tf_keras package is not installed")
  return keras


def _lookup_loss(table):
  return lambda: cp.loss(tf.gather(table, cp.IDS))


# entry -> step(spec, optimizer, table, runner): builds one step. `optimizer`
# is the plain one; the entry wraps it where it says so (once per test).
def _apply_gradients(spec, optimizer, table, runner):
  grads = runner.gradients(_lookup_loss(table), [table])
  return spec.apply_gradients(optimizer, zip(grads, [table]))


def _minimize(spec, optimizer, table, runner):
  return spec.minimize(optimizer, runner.loss(_lookup_loss(table)),
                       var_list=[table])


def _wrapped_apply_gradients(spec, wrapped, table, runner):
  del spec  # The wrapped optimizer carries it.
  grads = runner.gradients(_lookup_loss(table), [table])
  return wrapped.apply_gradients(list(zip(grads, [table])))


def _wrapped_minimize(spec, wrapped, table, runner):
  del spec
  return wrapped.minimize(runner.loss(_lookup_loss(table)), var_list=[table])


def _wrapped_compute_apply(spec, wrapped, table, runner):
  del spec
  pairs = wrapped.compute_gradients(runner.loss(_lookup_loss(table)),
                                    var_list=[table])
  return wrapped.apply_gradients(pairs)


def _wrapped_apply(spec, wrapped, table, runner):
  del spec
  grads = runner.gradients(_lookup_loss(table), [table])
  return wrapped.apply(grads, [table])


# name -> (step, whether the optimizer is wrapped first).
STEPS = {
    "spec.apply_gradients": (_apply_gradients, False),
    # Built on the model's variables first, as Keras asks under a strategy.
    "wrapped.build+apply_gradients": (_wrapped_apply_gradients, True),
    "spec.apply_gradients(wrapped)": (_apply_gradients, True),
    "spec.minimize": (_minimize, False),
    "spec.minimize(wrapped)": (_minimize, True),
    "wrapped.apply_gradients": (_wrapped_apply_gradients, True),
    "wrapped.minimize": (_wrapped_minimize, True),
    "wrapped.compute_gradients+apply_gradients": (_wrapped_compute_apply,
                                                  True),
    "wrapped.apply": (_wrapped_apply, True),
}
_BOTH = ("spec.apply_gradients", "spec.apply_gradients(wrapped)",
         "spec.minimize", "spec.minimize(wrapped)", "wrapped.apply_gradients")
# family -> (its entries, its modes).
FAMILIES = {
    "v1": (_BOTH + ("wrapped.minimize",
                    "wrapped.compute_gradients+apply_gradients"),
           helpers.ALL_MODES),
    "keras": (_BOTH + ("wrapped.build+apply_gradients", "wrapped.apply",
                       "fit"),
              (helpers.EAGER, helpers.TF_FUNCTION, helpers.XLA)),
    "tf_keras": (_BOTH + ("wrapped.build+apply_gradients", "wrapped.minimize",
                          "fit"),
                 (helpers.EAGER, helpers.TF_FUNCTION)),
}
CASES = [pytest.param(family, entry, mode,
                      id=f"{family}-{entry}" + ("" if entry == "fit"
                                                else f"-{mode.name}"),
                      marks=[helpers.needs_keras_3] if family == "keras"
                      else [])
         for family, (entries, modes) in FAMILIES.items()
         for entry in entries
         for mode in (modes[:1] if entry == "fit" else modes)]


def _adam(family):
  if family == "v1":
    return tf.compat.v1.train.AdamOptimizer(0.05)
  module = keras if family == "keras" else _tf_keras()
  return module.optimizers.Adam(0.05)


class _Runner(helpers.Runner):
  """A runner for a Keras family: eager or tf.function (XLA or not)."""

  def variable(self, value, name, dtype=tf.float32, trainable=True):
    del dtype  # float32 here.
    return keras.Variable(value, name=name, trainable=trainable)


def _runner(family, mode):
  """The mode's runner; Keras 3 variables for the Keras 3 family."""
  if family == "keras":
    return contextlib.nullcontext(_Runner(mode))
  return mode.runner()


def _state_shapes(optimizer):
  # A method of v1 and the legacy tf_keras optimizers, a property of others.
  variables = optimizer.variables
  # As lists: under TF1 behaviour a shape is of unhashable Dimensions.
  return {tuple(tf.TensorShape(v.shape).as_list()) for v in (
      variables() if callable(variables) else variables)}


def _train(runner, make_step, variable):
  run = runner.step(make_step)
  trajectory = []
  for _ in range(cp.STEPS):
    run()
    trajectory.append(np.array(runner.value(variable)))
  return trajectory


@functools.lru_cache(maxsize=None)
def _reference(family, mode):
  """The split reference's trajectory: the same optimizer, plainly."""
  with _runner(family, mode) as runner:
    small = runner.variable(cp.split_start(KIND), "small")
    frozen = runner.variable(cp.TABLE0, "frozen", trainable=False)
    optimizer = _adam(family)

    def step():
      grads = runner.gradients(lambda: cp.loss(cp.split_lookup(
          small, frozen, KIND, cp.IDS, static=mode is helpers.XLA)), [small])
      return optimizer.apply_gradients(list(zip(grads, [small])))

    return _train(runner, step, small)


def _fit(family):
  module = keras if family == "keras" else _tf_keras()
  table_model, split_model = cp.keras_models(module)
  model = table_model()
  optimizer = _adam(family)
  spec = tfpartial.train_only(model.table, cp.KINDS[KIND][0], compact=True)
  trajectory = cp.train_keras(module, model, optimizer, spec,
                              helpers.KERAS_MODEL_FIT)
  reference = cp.train_keras(module, split_model(KIND, family == "keras"),
                             _adam(family), None, helpers.KERAS_MODEL_FIT)
  # Keras 3's fit compiles with XLA ("auto"); tf_keras' does not.
  cp.check(KIND, trajectory, reference, exact=family != "keras")
  return optimizer


@pytest.mark.parametrize("family, entry, mode", CASES)
def test_every_entry_point_steps_a_compact_spec(family, entry, mode):
  if entry == "fit":
    shapes = _state_shapes(_fit(family))
  else:
    step, wrapped = STEPS[entry]
    with _runner(family, mode) as runner:
      table = runner.variable(cp.TABLE0, "table")
      spec = tfpartial.train_only(table, cp.KINDS[KIND][0], compact=True)
      optimizer = _adam(family)
      handed = spec.wrap(optimizer) if wrapped else optimizer
      if entry.startswith("wrapped.build"):
        handed.build([table])
      trajectory = _train(runner, lambda: step(spec, handed, table, runner),
                          table)
      shapes = _state_shapes(optimizer)
    cp.check(KIND, trajectory, _reference(family, mode),
             exact=mode is not helpers.XLA)
  assert (cp.TRAIN_ROWS.size, cp.DIM) in shapes, shapes
  assert cp.TABLE0.shape not in shapes, "state the size of the table"


def test_a_wrapped_optimizer_of_another_spec_with_compact():
  """Stepped by a spec it does not hold, a wrapped optimizer would need two
  steps, and a compact spec trains in one: a ValueError that says how to
  make one spec, before anything changes; that spec then steps it."""
  table = tf.Variable(cp.TABLE0, name="table")
  other = tf.Variable([1.0, 2.0], name="other")
  spec = tfpartial.train_only(table, cp.TRAIN_ROWS, compact=True)
  frozen_other = tfpartial.freeze(other, 0)
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
  pairs = [(tf.ones_like(cp.TABLE0), table), (tf.ones(2), other)]
  with pytest.raises(ValueError, match=r"wrapped with another spec \(other: "
                     r"1/2 frozen\) than the one stepping it \(table: .*"
                     r"compact\).*`\(spec \| other\)\.wrap\(optimizer\)`"):
    spec.apply_gradients(frozen_other.wrap(optimizer), pairs)
  helpers.assert_same_bits(table.numpy(), cp.TABLE0, "table")
  helpers.assert_same_bits(other.numpy(), np.float32([1.0, 2.0]), "other")
  spec.apply_gradients((spec | frozen_other).wrap(optimizer), pairs)
  trained = cp.trains(KIND)
  helpers.assert_same_bits(table.numpy()[~trained], cp.TABLE0[~trained],
                           "frozen rows")
  np.testing.assert_array_equal(table.numpy()[trained],
                                cp.TABLE0[trained] - np.float32(0.1))
  np.testing.assert_array_equal(other.numpy(), np.float32([1.0, 1.9]))
