"""tf_keras (Keras 2) optimizers, new and legacy: the conformance suite.

Runs only where the `tf_keras` package is installed (the test extra
installs it); codebases with `TF_USE_LEGACY_KERAS=1` train with these.
"""

import numpy as np
import pytest
import tensorflow as tf

import compact_problem as cp
import conformance
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

  def __init__(self, split=False, poison=True):
    super().__init__()
    constant = tf_keras.initializers.Constant
    self.split, self.poison = split, poison
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
    elif not self.poison:
      x, b = self.x, self.b
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


def _train(model, optimizer, spec, mode, applied=None):
  """The values after each step; `applied`, a list, gets the optimizer
  that applies the gradients (the wrapped one where `mode` wraps)."""
  trajectory = []
  if mode.fit:
    model.compile(optimizer=spec.wrap(optimizer) if spec else optimizer,
                  loss=_squared_sum)
    if applied is not None:
      applied.append(model.optimizer)
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
    wrapped = spec.wrap(optimizer)
    apply = wrapped.apply_gradients
  else:
    apply = lambda pairs: spec.apply_gradients(optimizer, pairs)
  if applied is not None:
    applied.append(wrapped if spec is not None and mode.wrap else optimizer)

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


def _state(optimizer):
  """The optimizer's variables: a method of the legacy optimizers, a
  property of the new ones."""
  return (optimizer.variables() if callable(optimizer.variables)
          else optimizer.variables)


class TestKeras2(conformance.Suite):
  """Keras 2 optimizers, new and legacy (`tf_keras`, or `keras` on
  TensorFlow 2.15), in every way of training but XLA in a custom loop."""

  OPTIMIZERS = OPTIMIZERS
  NAMES = {
      "main": OPTIMIZERS,
      "decay": ("AdamW", "Ftrl", "Lion", "legacy_Ftrl"),
      # Sparse updates of the new and of the legacy optimizers.
      "rows": ("SGD_momentum", "Lion", "legacy_Adam",
               "legacy_RMSprop_centered"),
      "compact": OPTIMIZERS,
  }
  PLAIN_DIFFERS = ("Ftrl",)  # Grappler rewrites it in a `tf.function`.
  EXACT_WAYS = tuple(mode for mode in helpers.KERAS_LOOP_AND_FIT
                     if not mode.jit_compile)

  @pytest.fixture
  def way(self, keras_exact_mode):
    return keras_exact_mode

  def fuses(self, way):
    return way.jit_compile  # Keras 2's fit compiles no XLA.

  def wraps(self, way):
    return way.wrap

  def train(self, way, name, compact):
    model, applied = _Model(), []
    spec = model.spec()
    if compact:
      spec = (tfpartial.train_only(model.x, ~X_FROZEN, compact=True)
              | tfpartial.freeze(model.b))
    trajectory = _train(model, OPTIMIZERS[name](), spec, way, applied=applied)
    state = _state(applied[0])
    return conformance.Run(
        [(v["x"], v["b"], v["c"]) for v in trajectory],
        [tuple(v.shape) for v in state],
        frozenset(tuple(v.shape) for v in state))

  def reference(self, way, name):
    trajectory = _train(_Model(split=True), OPTIMIZERS[name](), None, way)
    return [(v["t"], v["c"]) for v in trajectory]

  def plain_run(self, way, name):
    trajectory = _train(_Model(poison=False), OPTIMIZERS[name](), None, way)
    return [np.concatenate([np.ravel(v[k]) for k in "xbc"])
            for v in trajectory]

  def plain_state(self, name, variables):
    """Keras keeps optimizer state by position: shapes in order."""
    model, optimizer = _Model(), OPTIMIZERS[name]()
    optimizer.apply_gradients([(tf.zeros_like(getattr(model, v)),
                                getattr(model, v)) for v in variables])
    return [tuple(v.shape) for v in _state(optimizer)]

  def zero_gradient_moves(self, name):
    model, optimizer = _Model(), OPTIMIZERS[name]()
    optimizer.apply_gradients([(tf.zeros_like(model.x), model.x)])
    return not np.array_equal(model.x.numpy(), X0)

  def rows(self, way, name):
    make = OPTIMIZERS[name]
    table_model, split_model = cp.keras_models(tf_keras)
    model = conformance.poisoned_rows(table_model)()
    spec = tfpartial.train_only(model.table, cp.TRAIN_ROWS)
    trajectory = cp.train_keras(tf_keras, model, make(), spec, way)
    reference = cp.train_keras(tf_keras, split_model("rows"), make(), None,
                               way)
    return trajectory, reference


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
