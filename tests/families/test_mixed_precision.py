"""Mixed precision: a loss-scale optimizer must check the masked gradients.

Under a mixed_float16 policy, `model.compile(optimizer=spec.wrap(opt))`
makes Keras put its own `LossScaleOptimizer` around the wrapped optimizer,
whose overflow check would then see the frozen gradients. tfpartial refuses
that order at the first step, naming the fix; the right order,
`spec.wrap(LossScaleOptimizer(opt))`, trains exactly, even when only the
frozen elements overflow in float16 (a plain run of the same model skips
every step). For Keras 3 and for Keras 2 (`tf_keras`, or `keras` on
TensorFlow 2.15), through `compile` + `fit` and in custom loops.

The problem: `y = x @ k` in float16, where the inputs of `k`'s first two
rows are 2000, so their float16 gradient overflows under the initial loss
scale (2**15); those two rows are frozen.
"""

import contextlib
import re

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial


def _packages():
  """name -> (Keras package, [optimizer factories]) for what is installed."""
  packages = {}
  if helpers.KERAS_3:
    import keras  # pylint: disable=g-import-not-at-top
    packages["keras3"] = keras
    try:
      import tf_keras  # pylint: disable=g-import-not-at-top
      packages["tf_keras"] = tf_keras
    except ImportError:
      pass
  else:  # TensorFlow 2.15: `keras` is Keras 2.
    import keras  # pylint: disable=g-import-not-at-top
    packages["keras2"] = keras
  return packages


PACKAGES = _packages()
CASES = [(package, kind) for package in PACKAGES
         for kind in (("Adam",) if package == "keras3"
                      else ("Adam", "legacy_Adam"))]
STEPS = 4

_RNG = np.random.default_rng(20261130)
X = _RNG.normal(size=(4, 4)).astype(np.float32)
X[:, :2] = 2000.0
Y = _RNG.normal(size=(4, 1)).astype(np.float32)
K0 = _RNG.normal(size=(4, 1)).astype(np.float32)
K0[:2] = 1e-4
FROZEN = np.zeros((4, 1), bool)
FROZEN[:2] = True


def _adam(keras, kind):
  if kind == "legacy_Adam":
    return keras.optimizers.legacy.Adam(0.01)
  return keras.optimizers.Adam(0.01)


def _loss_scale_optimizer(keras, inner):
  return keras.mixed_precision.LossScaleOptimizer(inner)


def _model_class(keras):
  class Model(keras.Model):
    """`k` whole, or (split reference) its trainable rows `t` only."""

    def __init__(self, split=False):
      super().__init__()
      self.split = split
      constant = keras.initializers.Constant
      if split:
        self.t = self.add_weight(name="t", shape=(2,),
                                 initializer=constant(K0[~FROZEN]))
        self.k_frozen = self.add_weight(name="k_frozen", shape=(4, 1),
                                        initializer=constant(K0),
                                        trainable=False)
      else:
        self.k = self.add_weight(name="k", shape=(4, 1),
                                 initializer=constant(K0))

    def kernel(self):
      # Read as the layer reads it (float16 under the policy), then float32
      # for the scatter: both models see the same float16 kernel.
      if self.split:
        return tf.tensor_scatter_nd_update(
            tf.cast(self.k_frozen, tf.float32), np.argwhere(~FROZEN),
            tf.cast(self.t, tf.float32))
      return tf.cast(self.k, tf.float32)

    def call(self, inputs):
      product = tf.matmul(tf.cast(inputs, tf.float16),
                          tf.cast(self.kernel(), tf.float16))
      return tf.cast(product, tf.float32)  # A float32 loss.

    def values(self):
      return self.t.numpy() if self.split else self.k.numpy()

  return Model


@contextlib.contextmanager
def _mixed_float16(keras):
  before = keras.mixed_precision.global_policy()
  keras.mixed_precision.set_global_policy("mixed_float16")
  try:
    yield
  finally:
    keras.mixed_precision.set_global_policy(before)


def _scale(optimizer):
  """The current loss scale of a loss-scale optimizer of any family."""
  scale = getattr(optimizer, "dynamic_scale", None)
  if scale is None:
    scale = optimizer.loss_scale
  return float(scale)


def _fit(keras, model, optimizer):
  trajectory = []
  model.compile(optimizer=optimizer, loss="mse")
  record = keras.callbacks.LambdaCallback(
      on_train_batch_end=lambda batch, logs: trajectory.append(model.values()))
  model.fit(np.tile(X, (STEPS, 1)), np.tile(Y, (STEPS, 1)), batch_size=4,
            shuffle=False, verbose=0, callbacks=[record])
  return trajectory


def _loop(model, optimizer, function):
  """A custom loop: scale the loss, unscale the gradients, apply."""
  keras3 = hasattr(optimizer, "scale_loss") and not hasattr(
      optimizer, "get_scaled_loss")

  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(tf.square(model(X) - Y))
      loss = (optimizer.scale_loss(loss) if keras3
              else optimizer.get_scaled_loss(loss))
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    if not keras3:  # Keras 3's apply unscales them itself.
      grads = optimizer.get_unscaled_gradients(grads)
    optimizer.apply_gradients(zip(grads, variables))

  if function:
    step = tf.function(step)
  trajectory = []
  for _ in range(STEPS):
    step()
    trajectory.append(model.values())
  return trajectory


def _train(package, kind, mode, spec_of_model=None):
  """Trains under mixed_float16: the trajectory and the optimizer."""
  keras = PACKAGES[package]
  with _mixed_float16(keras):
    model = _model_class(keras)(split=spec_of_model is None)
    if spec_of_model is None:
      optimizer = _loss_scale_optimizer(keras, _adam(keras, kind))
    else:
      optimizer = spec_of_model(model).wrap(
          _loss_scale_optimizer(keras, _adam(keras, kind)))
    if mode.fit:
      trajectory = _fit(keras, model, optimizer)
    else:
      model(X)  # Built before the loop.
      trajectory = _loop(model, optimizer, function=mode.function)
  return trajectory, model.optimizer if mode.fit else optimizer


def _spec(model):
  return tfpartial.freeze(model.k, FROZEN)


@pytest.mark.parametrize("package, kind", CASES)
def test_only_frozen_elements_overflow_and_a_plain_run_skips_every_step(
    package, kind):
  """The problem is what the test needs: without the freeze, every step
  overflows and is skipped (the scale halves, nothing trains)."""
  keras = PACKAGES[package]
  with _mixed_float16(keras):
    model = _model_class(keras)()
    _fit(keras, model, _adam(keras, kind))  # compile adds the loss scaling.
    assert "LossScaleOptimizer" in type(model.optimizer).__name__
    assert _scale(model.optimizer) == 2.0 ** 15 / 2 ** STEPS
    helpers.assert_same_bits(model.k.numpy(), K0, "k, every step skipped")


@pytest.mark.parametrize("package, kind", CASES)
@pytest.mark.parametrize("mode", [helpers.KERAS_MODEL_FIT, helpers.KERAS_EAGER,
                                  helpers.KERAS_TF_FUNCTION], ids=str)
def test_wrapped_loss_scale_optimizer_trains_exactly_with_no_skipped_step(
    package, kind, mode):
  trajectory, optimizer = _train(package, kind, mode, _spec)
  reference, reference_optimizer = _train(package, kind, mode)
  assert type(optimizer).__name__.startswith("PartialLossScaleOptimizer")
  assert tfpartial.spec_of(optimizer) is not None
  assert _scale(optimizer) == _scale(reference_optimizer) == 2.0 ** 15
  assert int(optimizer.iterations) == STEPS
  assert len(trajectory) == len(reference) == STEPS
  for step, (k, t) in enumerate(zip(trajectory, reference), start=1):
    helpers.assert_same_bits(k[FROZEN], K0[FROZEN], f"frozen k, step {step}")
    np.testing.assert_allclose(k[~FROZEN], t, rtol=2e-5, atol=1e-6,
                               err_msg=f"trainable k, step {step}")
  assert not np.array_equal(trajectory[-1][~FROZEN], K0[~FROZEN])


def _fix(package):
  name = {"keras3": "keras", "keras2": "keras", "tf_keras": "tf_keras"}
  return (f"spec.wrap({name[package]}.mixed_precision."
          "LossScaleOptimizer(optimizer))")


@pytest.mark.parametrize("package, kind", CASES)
def test_compile_around_a_wrapped_optimizer_is_refused_in_compile(package,
                                                                  kind):
  """Refused when compile makes the LossScaleOptimizer (at the latest, at
  the first step), with the fix in the message."""
  keras = PACKAGES[package]
  with _mixed_float16(keras):
    model = _model_class(keras)()
    optimizer = _spec(model).wrap(_adam(keras, kind))
    compiled = False
    with pytest.raises(ValueError) as raised:
      model.compile(optimizer=optimizer, loss="mse")
      compiled = True
      model.fit(X, Y, batch_size=4, verbose=0)
  # Keras 2 marks the optimizer a LossScaleOptimizer is made around, and
  # Keras 3 sets its loss_scale_factor (3.15 does; 3.5 did not): refused in
  # compile. Older Keras 3 touches it first when building, in the first
  # step: refused there, before anything changes.
  assert not compiled or package == "keras3"
  message = str(raised.value)
  assert "a LossScaleOptimizer wraps the tfpartial optimizer Partial" in message
  assert _fix(package) in message
  helpers.assert_same_bits(model.k.numpy(), K0, "k after the refusal")
  assert int(optimizer.iterations) == 0


@pytest.mark.parametrize("package, kind", CASES)
def test_a_loss_scale_optimizer_made_around_a_wrapped_one_is_refused(
    package, kind):
  """In a custom loop too, and eagerly, where a step the loss-scale
  optimizer skips never reaches the wrapped optimizer."""
  keras = PACKAGES[package]
  with _mixed_float16(keras):
    model = _model_class(keras)()
    model(X)
    wrapped = _spec(model).wrap(_adam(keras, kind))
    with pytest.raises(ValueError, match=re.escape(_fix(package))):
      _loop(model, _loss_scale_optimizer(keras, wrapped), function=False)
  helpers.assert_same_bits(model.k.numpy(), K0, "k after the refusal")
