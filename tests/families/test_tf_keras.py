"""tf_keras (Keras 2) optimizers, new and legacy: the freeze and the reference.

Runs only where the `tf_keras` package is installed (the test extra
installs it); codebases with `TF_USE_LEGACY_KERAS=1` train with these.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import processes
import problems
import tfpartial
from problems import B0, C0, X0, X_FROZEN

if helpers.KERAS_3:
  tf_keras = pytest.importorskip(
      "tf_keras", reason="the tf_keras package is not installed")
else:  # TensorFlow 2.15 and older: `keras` itself is Keras 2.
  import keras as tf_keras  # pylint: disable=g-import-not-at-top
K, L = tf_keras.optimizers, tf_keras.optimizers.legacy

OPTIMIZERS = {
    "SGD_momentum": lambda: K.SGD(0.05, momentum=0.9, nesterov=True),
    "Adam_ema_overwrite": lambda: K.Adam(0.05, use_ema=True, ema_momentum=0.5,
                                         ema_overwrite_frequency=2),
    "AdamW": lambda: K.AdamW(0.05, weight_decay=0.2),
    "Ftrl": lambda: K.Ftrl(0.1, l1_regularization_strength=0.05,
                           l2_shrinkage_regularization_strength=0.1),
    "Lion": lambda: K.Lion(0.01, weight_decay=0.1),
    "Adam_global_clipnorm": lambda: K.Adam(0.05, global_clipnorm=0.5),
    "legacy_SGD_momentum": lambda: L.SGD(0.05, momentum=0.9),
    "legacy_Adam": lambda: L.Adam(0.05),
    "legacy_Ftrl": lambda: L.Ftrl(0.1, l1_regularization_strength=0.05,
                                  l2_shrinkage_regularization_strength=0.1),
    "legacy_RMSprop_centered": lambda: L.RMSprop(0.01, momentum=0.5,
                                                 centered=True),
    "LossScale_legacy_Adam": lambda: tf_keras.mixed_precision.LossScaleOptimizer(
        L.Adam(0.05)),
}
STEPS = 4


class _Model(tf_keras.Model):
  """The problem's x, b, c as tf_keras weights (plain tf.Variables)."""

  def __init__(self, split=False):
    super().__init__()
    constant = tf_keras.initializers.Constant
    self.split = split
    if split:
      self.t = self.add_weight("t", shape=(int((~X_FROZEN).sum()),),
                               initializer=constant(X0[~X_FROZEN]))
      self.x_frozen = self.add_weight("x_frozen", shape=X0.shape,
                                      initializer=constant(X0), trainable=False)
    else:
      self.x = self.add_weight("x", shape=X0.shape, initializer=constant(X0))
    self.b = self.add_weight("b", shape=B0.shape, initializer=constant(B0),
                             trainable=not split)
    self.c = self.add_weight("c", shape=C0.shape, initializer=constant(C0))

  def call(self, inputs):
    if self.split:
      x = tf.tensor_scatter_nd_update(self.x_frozen, np.argwhere(~X_FROZEN),
                                      self.t)
      b = self.b
    else:
      x = problems.poisoned(self.x, X_FROZEN)
      b = problems.poisoned(self.b, np.ones(B0.shape, bool))
    residual = tf.matmul(x * self.c, problems.W) + b - problems.Y
    return tf.reshape(residual, [1, -1]) + 0.0 * inputs

  def spec(self):
    return (tfpartial.freeze(self.x, np.s_[0, :2])
            | tfpartial.freeze(self.x, ([1, 2], [3, 0]))
            | tfpartial.freeze(self.b))

  def values(self):
    if self.split:
      return {"t": self.t.numpy(), "c": self.c.numpy()}
    return {"x": self.x.numpy(), "b": self.b.numpy(), "c": self.c.numpy()}


def _squared_sum(y_true, y_pred):
  return tf.reduce_sum(tf.square(y_pred - y_true), axis=-1)


INPUTS, TARGETS = np.ones((1, 1), np.float32), np.zeros((1, 6), np.float32)


def _train(model, optimizer, spec, mode):
  trajectory = []
  if mode.fit:
    model.compile(optimizer=spec.wrap(optimizer) if spec else optimizer,
                  loss=_squared_sum)
    record = tf_keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: trajectory.append(model.values()))
    model.fit(np.repeat(INPUTS, STEPS, 0), np.repeat(TARGETS, STEPS, 0),
              batch_size=1, shuffle=False, verbose=0, callbacks=[record])
    return trajectory
  model(INPUTS)
  variables = model.trainable_variables
  if spec is None:
    apply = optimizer.apply_gradients
  elif mode.wrap:
    apply = spec.wrap(optimizer).apply_gradients
  else:
    apply = lambda pairs: spec.apply_gradients(optimizer, pairs)

  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(_squared_sum(TARGETS, model(INPUTS)))
      if hasattr(optimizer, "get_scaled_loss"):
        loss = optimizer.get_scaled_loss(loss)
    grads = tape.gradient(loss, variables)
    if hasattr(optimizer, "get_unscaled_gradients"):
      grads = optimizer.get_unscaled_gradients(grads)
    apply(list(zip(grads, variables)))

  step = mode.compiled(step)
  for _ in range(STEPS):
    step()
    trajectory.append(model.values())
  return trajectory


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_tf_keras_optimizers_freeze_and_follow_the_reference(
    keras_exact_mode, name):
  mode = keras_exact_mode
  model = _Model()
  trajectory = _train(model, OPTIMIZERS[name](), model.spec(), mode)
  reference = _train(_Model(split=True), OPTIMIZERS[name](), None, mode)
  assert len(trajectory) == len(reference) == STEPS
  for step, (values, ref) in enumerate(zip(trajectory, reference), start=1):
    helpers.assert_same_bits(values["x"][X_FROZEN], X0[X_FROZEN],
                             f"frozen x, step {step}")
    helpers.assert_same_bits(values["b"], B0, f"b, step {step}")
    np.testing.assert_allclose(values["x"][~X_FROZEN], ref["t"], rtol=2e-5,
                               atol=1e-6, err_msg=f"x trainable, step {step}")
    np.testing.assert_allclose(values["c"], ref["c"], rtol=2e-5, atol=1e-6)
  assert not np.array_equal(trajectory[-1]["x"][~X_FROZEN], X0[~X_FROZEN])


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_tf_keras_compact_element_masks_follow_the_reference(
    keras_exact_mode, name):
  """`compact=True` on an element mask: state only for the trainable
  elements, which follow the split reference (bits where nothing fuses)."""
  mode = keras_exact_mode
  model = _Model()
  model(INPUTS)
  spec = (tfpartial.train_only(model.x, ~X_FROZEN, compact=True)
          | tfpartial.freeze(model.b))
  optimizer = OPTIMIZERS[name]()
  trajectory = _train(model, optimizer, spec, mode)
  reference = _train(_Model(split=True), OPTIMIZERS[name](), None, mode)
  for step, (values, ref) in enumerate(zip(trajectory, reference), start=1):
    helpers.assert_same_bits(values["x"][X_FROZEN], X0[X_FROZEN],
                             f"frozen x, step {step}")
    helpers.assert_same_bits(values["b"], B0, f"b, step {step}")
    if mode.fuses:
      np.testing.assert_allclose(values["x"][~X_FROZEN], ref["t"], rtol=2e-5,
                                 atol=1e-6)
    else:
      helpers.assert_same_bits(values["x"][~X_FROZEN], ref["t"],
                               f"x trainable, step {step}")
  assert not np.array_equal(trajectory[-1]["x"][~X_FROZEN], X0[~X_FROZEN])
  # A method of the legacy optimizers, a property of the new ones.
  variables = (optimizer.variables() if callable(optimizer.variables)
               else optimizer.variables)
  shapes = {tuple(v.shape) for v in variables}
  assert X0.shape not in shapes, "the optimizer holds state the size of x"


def test_wrapped_tf_keras_optimizer_is_its_class_and_saves(tmp_path):
  model = _Model()
  wrapped = model.spec().wrap(K.AdamW(0.05, weight_decay=0.1))
  assert isinstance(wrapped, K.AdamW)
  model.compile(optimizer=wrapped, loss=_squared_sum)
  model.fit(INPUTS, TARGETS, verbose=0)
  config = wrapped.get_config()
  assert config["weight_decay"] == 0.1
  assert '"freeze": "..."' in config["tfpartial"]["spec"]
  clone = type(wrapped).from_config(config)
  assert type(clone) is type(wrapped)


def test_tf_keras_minimize_with_a_tape():
  x = tf.Variable(X0, name="x")
  spec = tfpartial.train_only(x, np.eye(3, 4, dtype=bool))
  optimizer = L.Ftrl(0.1, l1_regularization_strength=1.0)
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(x * x)
  spec.minimize(optimizer, loss, var_list=[x], tape=tape)
  frozen = ~np.eye(3, 4, dtype=bool)
  helpers.assert_same_bits(x.numpy()[frozen], X0[frozen], "frozen x")
  assert not np.array_equal(x.numpy()[~frozen], X0[~frozen])


def test_saved_model_with_a_wrapped_optimizer_loads_in_a_fresh_process(
    tmp_path):
  """Import the Keras 2 package, then tfpartial: load_model finds the class."""
  import os, sys  # pylint: disable=g-import-not-at-top,multiple-imports
  model = tf_keras.Sequential([tf_keras.Input((3,)),
                               tf_keras.layers.Dense(2, name="d")])
  kernel = model.layers[0].kernel
  model.compile(optimizer=tfpartial.freeze(kernel, 0).wrap(
      K.Adam(0.1)), loss="mse")
  model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
  path = str(tmp_path / "model.keras")
  model.save(path)
  script = (
      f"import {tf_keras.__name__} as k, tfpartial, numpy as np\n"
      f"m = k.models.load_model({path!r})\n"
      "before = m.layers[0].kernel.numpy()\n"
      "m.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)\n"
      "after = m.layers[0].kernel.numpy()\n"
      "print(type(m.optimizer).__name__, np.array_equal(before[0], after[0]),"
      " bool((before[1:] != after[1:]).all()))\n")
  result = processes.run([sys.executable, "-c", script], timeout=300,
                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split()[-3:] == ["PartialAdam", "True", "True"], (
      result.stdout)
