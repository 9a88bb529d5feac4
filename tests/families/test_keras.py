"""Keras 3 optimizers: the conformance suite, and what is Keras' own.

`TestKeras3` runs `conformance.Suite` for every optimizer of
`keras_problems` in each way of training (`keras_mode`): eager and
`tf.function` custom loops with `spec.apply_gradients`, a wrapped optimizer
in `tf.function`, XLA, and `model.fit` with a wrapped optimizer. The frozen
gradients are Inf/NaN throughout.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import compact_problem as cp
import conformance
import helpers
import processes
import keras_problems as kp
import tfpartial
from problems import B0, X0, X_FROZEN

pytestmark = helpers.needs_keras_3

STEPS = 4
_loop = kp.train


def _tolerance(mode):
  if mode.fuses:
    return dict(rtol=2e-5, atol=1e-6)
  return dict(rtol=1e-6, atol=1e-7)


class TestKeras3(conformance.Suite):
  """keras.optimizers: the element-wise ones (`kp.ELEMENTWISE`; Keras'
  Adam family as its fast paths take it, compact)."""

  OPTIMIZERS = {**kp.ADAM_FAMILY, **kp.ELEMENTWISE}
  NAMES = {
      "main": kp.ELEMENTWISE,
      "decay": ("SGD_momentum_nesterov_decay", "AdamW", "Ftrl_shrinkage",
                "Lion", "ScheduleFreeAdamW", "AdamW_ema_overwrite"),
      # Momentum and weight decay, Adam's moments, an accumulator, FTRL.
      "rows": ("SGD_momentum_nesterov_decay", "Adam_amsgrad", "Adagrad",
               "Ftrl_shrinkage"),
      "compact": OPTIMIZERS,
  }
  # Grappler rewrites their arithmetic in a `tf.function`; ScheduleFreeAdamW's
  # update goes wrong there (Keras 3.15, without tfpartial too).
  PLAIN_DIFFERS = ("AdamW_ema_overwrite", "Ftrl_shrinkage",
                   "ScheduleFreeAdamW")
  EXACT_WAYS = tuple(mode for mode in helpers.KERAS_MODES if not mode.fuses)

  @pytest.fixture
  def way(self, keras_mode):
    return keras_mode

  def fuses(self, way):
    return way.fuses

  def wraps(self, way):
    return way.wrap

  def train(self, way, name, compact):
    model, applied = kp.PartialModel(), []
    spec = model.spec()
    if compact:
      spec = (tfpartial.train_only(model.x, ~X_FROZEN, compact=True)
              | tfpartial.freeze(model.b))
    trajectory = _loop(model, self.OPTIMIZERS[name](), spec, way,
                       applied=applied)
    [optimizer] = applied
    return conformance.Run(
        [(v["x"], v["b"], v["c"]) for v in trajectory],
        [tuple(v.shape) for v in optimizer.variables],
        frozenset(tuple(v.shape) for v in optimizer.variables))

  def reference(self, way, name):
    trajectory = _loop(kp.SplitModel(), self.OPTIMIZERS[name](), None, way)
    return [(v["t"], v["c"]) for v in trajectory]

  def plain_run(self, way, name):
    trajectory = _loop(kp.PartialModel(poison=False), self.OPTIMIZERS[name](),
                       None, way)
    return [np.concatenate([np.ravel(v[k]) for k in "xbc"])
            for v in trajectory]

  def plain_state(self, name, variables):
    """Keras keeps optimizer state by position: shapes in order."""
    model, optimizer = kp.PartialModel(poison=False), self.OPTIMIZERS[name]()
    optimizer.apply_gradients([(tf.zeros_like(getattr(model, v)),
                                getattr(model, v)) for v in variables])
    return [tuple(v.shape) for v in optimizer.variables]

  def zero_gradient_moves(self, name):
    model, optimizer = kp.PartialModel(poison=False), self.OPTIMIZERS[name]()
    optimizer.apply_gradients([(tf.zeros_like(model.x), model.x)])
    return not np.array_equal(model.x.numpy(), X0)

  def rows(self, way, name):
    make = self.OPTIMIZERS[name]
    table_model, split_model = cp.keras_models(keras)
    model = conformance.poisoned_rows(table_model)()
    spec = tfpartial.train_only(model.table, cp.TRAIN_ROWS)
    trajectory = cp.train_keras(keras, model, make(), spec, way)
    reference = cp.train_keras(keras, split_model("rows", way.fuses), make(),
                               None, way)
    return trajectory, reference


def _check_frozen(trajectory, frozen_x=X0[X_FROZEN]):
  for step, values in enumerate(trajectory, start=1):
    helpers.assert_same_bits(values["x"][X_FROZEN], frozen_x,
                             f"frozen x, step {step}")
    helpers.assert_same_bits(values["b"], B0, f"fully frozen b, step {step}")
    assert np.isfinite(values["x"]).all(), step


@pytest.mark.parametrize("name", sorted(kp.MIXING))
def test_mixing_optimizers_count_frozen_gradients_as_zero(keras_mode, name):
  model = kp.PartialModel()
  trajectory = _loop(model, kp.MIXING[name](), model.spec(), keras_mode)
  _check_frozen(trajectory)
  # The oracle: a plain copy, frozen gradients zeroed, frozen values put back.
  oracle = kp.PartialModel(poison=False)
  optimizer = kp.MIXING[name]()
  variables = [oracle.x, oracle.c]
  for step, values in enumerate(trajectory, start=1):
    with tf.GradientTape() as tape:
      loss = kp.loss_of(oracle)
    gx, gc = tape.gradient(loss, variables)
    optimizer.apply_gradients([(tf.where(X_FROZEN, 0.0, gx), oracle.x),
                               (gc, oracle.c)])
    oracle.x.assign(np.where(X_FROZEN, X0, oracle.x.numpy()))
    np.testing.assert_allclose(values["x"], oracle.x.numpy(),
                               **_tolerance(keras_mode),
                               err_msg=f"x, step {step}")
    np.testing.assert_allclose(values["c"], oracle.c.numpy(),
                               **_tolerance(keras_mode),
                               err_msg=f"c, step {step}")


@pytest.mark.parametrize("name", ["AdamW_ema_overwrite", "Ftrl_shrinkage",
                                  "SGD_momentum_nesterov_decay"])
def test_values_assigned_between_steps_are_kept(keras_mode, name):
  model = kp.PartialModel()
  written = X0 + 3.0

  def between(step):
    if step == 2:  # After two steps: as a restore or a pretrained load.
      model.x.assign(written)

  trajectory = _loop(model, kp.ELEMENTWISE[name](), model.spec(), keras_mode,
                     between=between)
  _check_frozen(trajectory[:2])
  _check_frozen(trajectory[2:], frozen_x=written[X_FROZEN])


def test_ema_finalization_at_the_end_of_fit_keeps_the_freeze():
  model = kp.PartialModel()
  optimizer = keras.optimizers.Adam(0.1, use_ema=True, ema_momentum=0.9)
  model.compile(optimizer=model.spec().wrap(optimizer), loss=kp.squared_sum)
  model.fit(np.repeat(kp.INPUTS, 3, 0), np.repeat(kp.TARGETS, 3, 0),
            batch_size=1, verbose=0)
  # fit ended with finalize_variable_values: the model now holds the EMA.
  helpers.assert_same_bits(model.x.numpy()[X_FROZEN], X0[X_FROZEN], "frozen x")
  helpers.assert_same_bits(model.b.numpy(), B0, "b")


def test_loss_scale_overflow_steps_skip_and_keep_the_freeze():
  """An Inf in a trainable gradient skips the step, as without tfpartial."""
  model, split = kp.PartialModel(), kp.SplitModel()
  optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.05))
  reference = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.05))
  spec = model.spec()
  for step in range(5):
    overflow = step in (1, 2)
    for net, opt in ((model, optimizer), (split, reference)):
      with tf.GradientTape() as tape:
        loss = opt.scale_loss(kp.loss_of(net))
      variables = net.trainable_variables
      grads = tape.gradient(loss, variables)
      grads = [g + np.inf if overflow and v is net.c else g
               for g, v in zip(grads, variables)]
      if net is model:
        spec.apply_gradients(opt, zip(grads, variables))
      else:
        opt.apply_gradients(zip(grads, variables))
    helpers.assert_same_bits(model.x.numpy()[X_FROZEN], X0[X_FROZEN], step)
    np.testing.assert_allclose(model.x.numpy()[~X_FROZEN], split.t.numpy(),
                               rtol=1e-6)
  assert float(optimizer.dynamic_scale) == float(reference.dynamic_scale)
  assert float(optimizer.dynamic_scale) < 32768.0  # Two overflows halved it.


def test_wrapped_is_a_real_keras_optimizer(tmp_path):
  model = kp.PartialModel()
  optimizer = keras.optimizers.AdamW(0.05, weight_decay=0.1)
  wrapped = model.spec().wrap(optimizer)
  assert isinstance(wrapped, keras.optimizers.AdamW)
  assert type(optimizer) is keras.optimizers.AdamW
  config = wrapped.get_config()
  assert config["weight_decay"] == 0.1 and "tfpartial" in config
  model.compile(optimizer=wrapped, loss=kp.squared_sum)
  model.fit(kp.INPUTS, kp.TARGETS, verbose=0)
  model.evaluate(kp.INPUTS, kp.TARGETS, verbose=0)


def test_dense_kernel_and_embedding_rows_save_and_load(tmp_path):
  """The README's model.fit example, saved and loaded: the freeze travels."""
  vocabulary, new_rows = 20, 5
  model = keras.Sequential([
      keras.Input((3,), dtype="int32"),
      keras.layers.Embedding(vocabulary, 4, name="emb"),
      keras.layers.Flatten(),
      keras.layers.Dense(2, name="head")])
  emb, kernel = model.layers[0].embeddings, model.layers[2].kernel
  spec = (tfpartial.train_only(emb, np.s_[vocabulary - new_rows:])
          | tfpartial.freeze(kernel, np.s_[:6]))
  model.compile(optimizer=spec.wrap(keras.optimizers.AdamW(0.05)), loss="mse")
  ids = np.array([[1, 16, 19], [18, 2, 15]], np.int32)
  targets = np.ones((2, 2), np.float32)
  before = {"emb": emb.numpy(), "kernel": kernel.numpy()}
  model.fit(ids, targets, epochs=3, verbose=0)
  helpers.assert_same_bits(emb.numpy()[:15], before["emb"][:15], "old rows")
  helpers.assert_same_bits(kernel.numpy()[:6], before["kernel"][:6], "kernel")
  assert not np.array_equal(emb.numpy()[15:], before["emb"][15:])
  path = tmp_path / "model.keras"
  model.save(path)
  loaded = keras.models.load_model(path)
  assert type(loaded.optimizer).__name__ == "PartialAdamW"
  emb2, kernel2 = loaded.layers[0].embeddings, loaded.layers[2].kernel
  saved = {"emb": emb2.numpy(), "kernel": kernel2.numpy()}
  loaded.fit(ids, targets, epochs=2, verbose=0)
  helpers.assert_same_bits(emb2.numpy()[:15], saved["emb"][:15], "old rows")
  helpers.assert_same_bits(kernel2.numpy()[:6], saved["kernel"][:6], "kernel")
  assert not np.array_equal(kernel2.numpy()[6:], saved["kernel"][6:])


def test_embedding_row_gradients_stay_sparse():
  layer = keras.layers.Embedding(10, 3)
  layer.build((None,))
  spec = tfpartial.freeze(layer.embeddings, np.s_[:5])
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(layer(np.array([1, 7, 7])))
  grad = tape.gradient(loss, layer.embeddings)
  assert isinstance(grad, tf.IndexedSlices)
  [(masked, _)] = spec.mask_gradients([(grad, layer.embeddings)])
  assert isinstance(masked, tf.IndexedSlices)
  np.testing.assert_array_equal(masked.values.numpy(),
                                [[0, 0, 0], [1, 1, 1], [1, 1, 1]])


def test_keras_variables_are_named_by_path():
  model = kp.PartialModel()
  spec = model.spec()
  assert repr(spec) == (f"FreezeSpec({model.x.path}: 4/12 frozen, "
                        f"{model.b.path}: all frozen)")
  loaded = tfpartial.load_spec(spec.to_json(), model.trainable_variables)
  assert loaded == spec


def test_spec_for_another_model_is_a_clear_error():
  model, other = kp.PartialModel(), kp.PartialModel()
  model.compile(optimizer=other.spec().wrap(keras.optimizers.Adam()),
                loss=kp.squared_sum)
  with pytest.raises(ValueError, match=r"the spec names variable '.*x' of shape \(3, 4\), which is not among the variables being trained .*another model"):
    model.fit(kp.INPUTS, kp.TARGETS, verbose=0)
  helpers.assert_same_bits(model.x.numpy(), X0, "x after the error")


def test_spec_on_a_non_trainable_variable_is_a_clear_error():
  model = kp.PartialModel()
  model.b.trainable = False
  model.compile(optimizer=tfpartial.freeze(model.b, 0).wrap(
      keras.optimizers.Adam()), loss=kp.squared_sum)
  with pytest.raises(ValueError, match=r"the spec names variable '.*b' of shape \(2,\), which is not among the variables being trained .*not trainable"):
    model.fit(kp.INPUTS, kp.TARGETS, verbose=0)


def test_keras_minimize_needs_a_callable_and_var_list():
  model = kp.PartialModel()
  spec, optimizer = model.spec(), keras.optimizers.SGD(0.1)
  with pytest.raises(TypeError, match=r"`var_list` is required"):
    spec.minimize(optimizer, lambda: kp.loss_of(model))
  with pytest.raises(TypeError, match=r"zero-argument callable"):
    spec.minimize(optimizer, kp.loss_of(model), var_list=[model.x])
  spec.minimize(optimizer, lambda: kp.loss_of(model),
                var_list=model.trainable_variables)
  helpers.assert_same_bits(model.x.numpy()[X_FROZEN], X0[X_FROZEN], "x")
  assert not np.array_equal(model.x.numpy(), X0)


def test_wrapping_a_wrapped_keras_optimizer_freezes_the_union():
  model = kp.PartialModel(poison=False)
  first = tfpartial.freeze(model.x, 0).wrap(keras.optimizers.AdamW(0.1, 0.3))
  twice = tfpartial.freeze(model.x, (2, 3)).wrap(first)
  assert type(twice) is type(first)  # PartialAdamW again, not nested.
  for _ in range(2):
    with tf.GradientTape() as tape:
      loss = kp.loss_of(model)
    variables = [model.x, model.c]
    twice.apply_gradients(zip(tape.gradient(loss, variables), variables))
  x = model.x.numpy()
  helpers.assert_same_bits(x[0], X0[0], "row 0")
  helpers.assert_same_bits(x[2, 3], X0[2, 3], "x[2, 3]")
  assert (x[1] != X0[1]).all()


def test_a_saved_wrapped_optimizer_loads_in_a_fresh_process(tmp_path):
  """`import keras, tfpartial` is all load_model needs: tfpartial, imported
  after TensorFlow, registers its classes at once."""
  import os, sys  # pylint: disable=g-import-not-at-top,multiple-imports
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
  kernel = model.layers[0].kernel
  model.compile(optimizer=tfpartial.freeze(kernel, 0).wrap(
      keras.optimizers.Adam(0.1)), loss="mse")
  model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
  path = str(tmp_path / "model.keras")
  model.save(path)
  script = (
      "import keras, numpy as np, tfpartial\n"
      f"m = keras.models.load_model({path!r})\n"
      "before = m.layers[0].kernel.numpy()\n"
      "m.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)\n"
      "after = m.layers[0].kernel.numpy()\n"
      "print(type(m.optimizer).__name__, tfpartial.spec_of(m) is not None,\n"
      "      np.array_equal(before[0], after[0]),\n"
      "      bool((before[1:] != after[1:]).all()))\n")
  result = processes.run([sys.executable, "-c", script], timeout=300,
                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split()[-4:] == ["PartialAdam", "True", "True", "True"]


def test_a_saved_spec_binds_by_position_not_by_layer_names():
  """docs/guides/keras.md: a wrapped optimizer restored from its config
  binds its spec to the variables it is built on by their position, so a
  model whose layers have other names still freezes the same elements."""
  saved = keras.Sequential([keras.Input((4,)), keras.layers.Dense(
      3, name="dense")], name="saved")
  spec = tfpartial.freeze(saved.layers[0].kernel, np.s_[:, 0])
  saved.compile(optimizer=spec.wrap(keras.optimizers.SGD(0.1, momentum=0.9)),
                loss="mse")
  saved.fit(np.ones((8, 4)), np.zeros((8, 3)), verbose=0)
  config = keras.optimizers.serialize(saved.optimizer)

  renamed = keras.Sequential([keras.Input((4,)), keras.layers.Dense(
      3, name="encoder")], name="renamed")
  renamed.compile(optimizer=keras.optimizers.deserialize(config), loss="mse")
  kernel = renamed.layers[0].kernel
  start = kernel.numpy()
  renamed.fit(np.ones((8, 4)), np.zeros((8, 3)), epochs=2, verbose=0)
  found = tfpartial.spec_of(renamed)
  assert found == tfpartial.freeze(kernel, np.s_[:, 0])
  helpers.assert_same_bits(kernel.numpy()[:, 0], start[:, 0], "column 0")
  assert (kernel.numpy()[:, 1:] != start[:, 1:]).all()


def test_tfpartial_imported_before_keras_registers_its_classes_on_first_use(
    tmp_path):
  """docs/guides/keras.md: imported before TensorFlow and Keras, tfpartial
  loads its API (which registers the wrapped classes) only when one of its
  names is first used, so `load_model` does not find them before that."""
  import os, subprocess, sys  # pylint: disable=g-import-not-at-top,multiple-imports
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
  model.compile(optimizer=tfpartial.freeze(model.layers[0].kernel, 0).wrap(
      keras.optimizers.SGD(0.1)), loss="mse")
  model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
  path = str(tmp_path / "model.keras")
  model.save(path)
  script = (
      "import tfpartial\n"
      "import keras\n"
      "try:\n"
      f"  keras.models.load_model({path!r})\n"
      "except TypeError as error:\n"
      "  print(str(error).splitlines()[0][:36])\n"
      "tfpartial.spec_of\n"
      f"print(type(keras.models.load_model({path!r}).optimizer).__name__)\n")
  # A real process: the python server has imported TensorFlow and Keras.
  result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=300, check=False,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.splitlines()[-2:] == [
      "Could not locate class 'PartialSGD'.", "PartialSGD"]
