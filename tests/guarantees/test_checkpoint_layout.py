"""Checkpoints move both ways: plain -> tfpartial and tfpartial -> plain.

A job adds tfpartial to a running training, or drops it, and resumes from
the other's checkpoint. With `spec.wrap`, a checkpoint has the plain run's
layout in every family, so the restore succeeds with nothing unmatched and
nothing left over, and training goes on with the frozen elements as
restored. `spec.minimize` and `spec.apply_gradients` leave a fully frozen
variable out of the update, so its optimizer slots are missing: that
difference is pinned here too, as documented. Per family (v1 with a TF1
`Saver` and with `tf.train.Checkpoint`; Keras 3 and tf_keras with their
weights files, `model.save` and TF checkpoints), entry point and spec
kind: element, row, whole variable.

The model: an embedding table `emb` (5, 3) looked up by id (sparse
gradients), a kernel `w` (6, 2) and a bias `b` (2,); the spec kinds freeze
rows 0-2 of `emb`, three elements of `w`, or all of `b`.
"""

import contextlib

import numpy as np
import pytest
import tensorflow as tf

import helpers
import processes
import tfpartial

IDS = np.array([[0, 3], [4, 1], [2, 4]], np.int32)
Y = np.array([[1.0, -1.0], [0.5, 2.0], [-1.5, 0.5]], np.float32)
_RNG = np.random.default_rng(20261201)
EMB0 = _RNG.normal(size=(5, 3)).astype(np.float32)
W0 = _RNG.normal(size=(6, 2)).astype(np.float32)
B0 = _RNG.normal(size=(2,)).astype(np.float32)
W_FROZEN = np.zeros((6, 2), bool)
W_FROZEN[[0, 2, 5], [1, 0, 1]] = True
EMB_FROZEN = np.zeros((5, 3), bool)
EMB_FROZEN[:3] = True
KINDS = ("element", "row", "whole")
STEPS = 2


def _frozen(kind):
  """kind -> (index of the variable among emb, w, b; frozen mask)."""
  return {"element": (1, W_FROZEN), "row": (0, EMB_FROZEN),
          "whole": (2, np.ones(B0.shape, bool))}[kind]


def _spec(kind, variables):
  emb, w, b = variables
  return {"element": lambda: tfpartial.freeze(w, W_FROZEN),
          "row": lambda: tfpartial.freeze(emb, np.s_[:3]),
          "whole": lambda: tfpartial.freeze(b)}[kind]()


def _loss(emb, w, b):
  features = tf.reshape(tf.gather(emb, IDS), [-1, 6])
  return tf.reduce_sum(tf.square(tf.matmul(features, w) + b - Y))


def _check_frozen(kind, before, after, what):
  position, frozen = _frozen(kind)
  helpers.assert_same_bits(after[position][frozen], before[position][frozen],
                           what)


def _moved(before, after):
  return any(not np.array_equal(x, y) for x, y in zip(before, after))


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory):
  """`plain_run(key, run)`: `run(directory)` once per key for the module.
  A plain run (no tfpartial) does not depend on the entry point a test
  resumes it with, so the entry points share it and only read what it
  saved (each test trains, saves and restores its own runs with tfpartial,
  and the plain runs that restore those)."""
  runs = {}

  def once(key, run):
    if key not in runs:
      runs[key] = run(tmp_path_factory.mktemp("plain") / "run")
    return runs[key]

  return once


# --- tf.compat.v1 optimizers: a TF1 Saver in a graph -------------------------

V1_ENTRIES = ("wrap_minimize", "wrap_compute_apply", "minimize",
              "apply_gradients")


def _v1_train_op(entry, spec, optimizer, variables, global_step):
  loss = _loss(*variables)
  if entry is None:
    return optimizer.minimize(loss, global_step=global_step)
  if entry == "wrap_minimize":
    return spec.wrap(optimizer).minimize(loss, global_step=global_step)
  if entry == "wrap_compute_apply":
    wrapped = spec.wrap(optimizer)
    return wrapped.apply_gradients(wrapped.compute_gradients(loss),
                                   global_step=global_step)
  if entry == "minimize":
    return spec.minimize(optimizer, loss, global_step=global_step)
  grads = tf.compat.v1.gradients(loss, variables)
  return spec.apply_gradients(optimizer, zip(grads, variables),
                              global_step=global_step)


def _v1_graph_run(directory, kind, entry, restore_from=None):
  """Builds the model and a train op (`entry` None: plain Adam), restores
  `restore_from` if given, trains, saves. Returns the checkpoint path, the
  values restored, the values after training, and the graph's variable
  names (what its Saver writes)."""
  with helpers.TF1_GRAPH.runner() as runner:
    variables = [runner.variable(value, name) for value, name in
                 ((EMB0, "emb"), (W0, "w"), (B0, "b"))]
    global_step = tf.compat.v1.train.get_or_create_global_step()
    spec = _spec(kind, variables)
    train_op = _v1_train_op(entry, spec, tf.compat.v1.train.AdamOptimizer(0.1),
                            variables, global_step)
    saver = tf.compat.v1.train.Saver()
    runner.run(tf.no_op())  # Initializes everything once.
    if restore_from is not None:
      saver.restore(runner.session, restore_from)
    start = runner.run(variables)
    for _ in range(STEPS):
      runner.run(train_op)
    end = runner.run(variables)
    path = saver.save(runner.session, str(directory / "ckpt"),
                      global_step=global_step)
    names = sorted(v.op.name for v in tf.compat.v1.global_variables())
  return path, start, end, names


def _keys(path):
  return sorted(name for name, _ in tf.train.list_variables(path))


def _layout_kept(entry, kind):
  return entry.startswith("wrap") or kind != "whole"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", V1_ENTRIES)
def test_v1_saver_plain_to_tfpartial_and_back(tmp_path, plain_run, entry,
                                              kind):
  plain, _, plain_end, plain_names = plain_run(
      ("v1_saver", kind), lambda directory: _v1_graph_run(directory, kind,
                                                          None))
  # Add tfpartial to the running job: resume from the plain checkpoint.
  path, start, end, names = _v1_graph_run(tmp_path / "partial", kind, entry,
                                          restore_from=plain)
  for restored, saved in zip(start, plain_end):
    helpers.assert_same_bits(restored, saved, "restored from plain")
  _check_frozen(kind, start, end, "frozen after resuming with tfpartial")
  assert _moved(start, end)
  slots_of_b = {"b/Adam", "b/Adam_1"}
  if _layout_kept(entry, kind):
    assert names == plain_names and _keys(path) == _keys(plain)
  else:  # Documented: fully frozen b has no slots with these entry points.
    assert set(plain_names) - set(names) == slots_of_b
    assert set(_keys(plain)) - set(_keys(path)) == slots_of_b
  # Drop tfpartial again: resume plain from the checkpoint of a run that
  # had tfpartial from the start.
  path, _, partial_end, _ = _v1_graph_run(tmp_path / "fresh", kind, entry)
  if _layout_kept(entry, kind):
    _, again, _, _ = _v1_graph_run(tmp_path / "again", kind, None,
                                   restore_from=path)
    for restored, saved in zip(again, partial_end):
      helpers.assert_same_bits(restored, saved, "restored from tfpartial")
  else:
    with pytest.raises(tf.errors.NotFoundError, match="b/Adam"):
      _v1_graph_run(tmp_path / "again", kind, None, restore_from=path)


def test_v1_saver_compact_changes_the_layout(tmp_path):
  """`compact=True`: the slots belong to the small variable of the rows
  that train, so neither checkpoint restores into the other's graph."""

  def run(directory, compact, restore_from=None):
    with helpers.TF1_GRAPH.runner() as runner:
      emb, w, b = variables = [runner.variable(value, name) for value, name in
                               ((EMB0, "emb"), (W0, "w"), (B0, "b"))]
      optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
      if compact:
        spec = tfpartial.train_only(emb, np.s_[3:], compact=True)
        train_op = spec.wrap(optimizer).minimize(_loss(*variables))
      else:
        train_op = optimizer.minimize(_loss(*variables))
      saver = tf.compat.v1.train.Saver()
      runner.run(tf.no_op())
      if restore_from is not None:
        saver.restore(runner.session, restore_from)
      runner.run(train_op)
      return saver.save(runner.session, str(directory / "ckpt"))

  plain = run(tmp_path / "plain", compact=False)
  compact = run(tmp_path / "compact", compact=True)
  assert set(_keys(compact)) - set(_keys(plain)) == {
      "emb_tfpartial_compact/Adam", "emb_tfpartial_compact/Adam_1"}
  assert set(_keys(plain)) - set(_keys(compact)) == {"emb/Adam", "emb/Adam_1"}
  with pytest.raises(tf.errors.NotFoundError, match="emb_tfpartial_compact"):
    run(tmp_path / "a", compact=True, restore_from=plain)
  with pytest.raises(tf.errors.NotFoundError, match="emb/Adam"):
    run(tmp_path / "b", compact=False, restore_from=compact)


# --- tf.compat.v1 optimizers: tf.train.Checkpoint, eager and tf.function ----


def _v1_eager_run(directory, kind, entry, function, restore_from=None):
  """As `_v1_graph_run`, in TF2 code with a `tf.train.Checkpoint` of the
  variables and the optimizer the user holds (the wrapped one for `wrap`).
  Returns the path, the values restored, after training, and the restore's
  status."""
  variables = [tf.Variable(value, name=name) for value, name in
               ((EMB0, "emb"), (W0, "w"), (B0, "b"))]
  spec = _spec(kind, variables)
  optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
  if entry is not None and entry.startswith("wrap"):
    optimizer = spec.wrap(optimizer)
  loss = lambda: _loss(*variables)

  def step():
    if entry in (None, "wrap_minimize"):
      optimizer.minimize(loss, var_list=variables)
    elif entry == "wrap_compute_apply":
      optimizer.apply_gradients(optimizer.compute_gradients(
          loss, var_list=variables))
    elif entry == "minimize":
      spec.minimize(optimizer, loss, var_list=variables)
    else:
      with tf.GradientTape() as tape:
        value = loss()
      grads = tape.gradient(value, variables)
      spec.apply_gradients(optimizer, zip(grads, variables))

  if function:
    step = tf.function(step)
  emb, w, b = variables
  checkpoint = tf.train.Checkpoint(optimizer=optimizer, emb=emb, w=w, b=b)
  status = None
  if restore_from is not None:
    status = checkpoint.restore(restore_from)
  start = [v.numpy() for v in variables]
  for _ in range(STEPS):
    step()  # The first step makes the slots; restores into them.
  end = [v.numpy() for v in variables]
  return checkpoint.save(str(directory / "ckpt")), start, end, status


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", V1_ENTRIES)
@pytest.mark.parametrize("function", [False, True],
                         ids=["eager", "tf_function"])
def test_v1_tf_checkpoint_plain_to_tfpartial_and_back(tmp_path, plain_run,
                                                      function, entry, kind):
  plain, _, plain_end, _ = plain_run(
      ("v1_tf_checkpoint", kind, function),
      lambda directory: _v1_eager_run(directory, kind, None, function))
  _, start, end, status = _v1_eager_run(tmp_path / "resumed", kind, entry,
                                        function, restore_from=plain)
  for restored, saved in zip(start, plain_end):
    helpers.assert_same_bits(restored, saved, "restored from plain")
  _check_frozen(kind, start, end, "frozen after resuming with tfpartial")
  assert _moved(start, end)
  # Eagerly, restoring makes the slots the checkpoint holds, b's too.
  status.assert_consumed()
  # A checkpoint tfpartial wrote from the start, resumed without it.
  path, _, partial_end, _ = _v1_eager_run(tmp_path / "partial", kind, entry,
                                          function)
  _, again, _, back = _v1_eager_run(tmp_path / "again", kind, None, function,
                                    restore_from=path)
  for restored, saved in zip(again, partial_end):
    helpers.assert_same_bits(restored, saved, "restored from tfpartial")
  if _layout_kept(entry, kind):
    back.assert_consumed()
  else:  # Documented: b's slots are missing; the plain run starts them anew.
    with pytest.raises(AssertionError, match="not bound to checkpointed"
                       ".*'b/Adam"):
      back.assert_existing_objects_matched()


@pytest.mark.parametrize("kind", ["rows", "elements"])
def test_v1_tf_checkpoint_saves_a_compact_variable_and_its_slots(
    tmp_path, tf2_mode, kind):
  """A wrapped v1 optimizer's `tf.train.Checkpoint` holds the small variable
  of a compact spec and its slots (a v1 optimizer saves slots only of the
  variables in the object graph, which the small variable once was not):
  a run resumed from it continues bit for bit as the uninterrupted one."""
  index = np.s_[3:] if kind == "rows" else ~EMB_FROZEN & (EMB0 > 0)

  def run(steps, save_to=None, restore_from=None):
    emb = tf.Variable(EMB0, name="emb")
    spec = tfpartial.train_only(emb, index, compact=True)
    optimizer = spec.wrap(tf.compat.v1.train.AdamOptimizer(0.1))
    checkpoint = tf.train.Checkpoint(emb=emb, optimizer=optimizer)
    if restore_from is not None:
      status = checkpoint.restore(restore_from)
    def step():
      optimizer.minimize(lambda: tf.reduce_sum(tf.square(tf.gather(emb, IDS))),
                         var_list=[emb])

    step = tf2_mode.function(step) if tf2_mode.function else step
    for _ in range(steps):
      step()
    if restore_from is not None:
      status.assert_consumed()
    path = save_to and checkpoint.save(str(tmp_path / save_to))
    return emb.numpy(), path

  straight, _ = run(4)
  _, path = run(2, save_to="half")
  keys = [name for name, _ in tf.train.list_variables(path)]
  compact = "optimizer/tfpartial_compact.Semb/"  # `/` escaped as `.S`.
  assert sorted(k[len(compact):] for k in keys if k.startswith(compact)) == [
      ".ATTRIBUTES/VARIABLE_VALUE",
      ".OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
      ".OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE"], keys
  resumed, _ = run(2, restore_from=path)
  helpers.assert_same_bits(resumed, straight, "resumed as uninterrupted")


# --- Keras 3 and tf_keras: weights files, archives, TF checkpoints -----------


def _keras_packages():
  """name -> Keras package, for what is installed: Keras 3, and Keras 2
  (`tf_keras`, or `keras` itself on TensorFlow 2.15)."""
  import keras  # pylint: disable=g-import-not-at-top
  if not helpers.KERAS_3:
    return {"keras2": keras}
  packages = {"keras3": keras}
  try:
    import tf_keras  # pylint: disable=g-import-not-at-top
    packages["tf_keras"] = tf_keras
  except ImportError:
    pass
  return packages


KERAS = _keras_packages()
KERAS_ENTRIES = ("wrap", "minimize", "apply_gradients")
# Keras' own weights files (all versions), and TF checkpoints (Keras 2).
FORMATS = {name: ("weights.h5",) + (() if name == "keras3" else ("tf",))
           for name in KERAS}
KERAS_CASES = [(package, fmt) for package in KERAS
               for fmt in FORMATS[package]]


def _keras_model(keras):
  constant = keras.initializers.Constant
  return keras.Sequential([
      keras.Input((2,), dtype="int32"),
      keras.layers.Embedding(5, 3, embeddings_initializer=constant(EMB0)),
      keras.layers.Flatten(),
      keras.layers.Dense(2, kernel_initializer=constant(W0),
                         bias_initializer=constant(B0))])


def _keras_loss(model):
  return tf.reduce_mean(tf.square(model(IDS) - Y))


def _keras_train(model, spec, entry):
  """Trains STEPS steps with `entry` (None: plain), the model compiled."""
  if entry in (None, "wrap"):
    model.fit(IDS, Y, batch_size=3, epochs=STEPS, shuffle=False, verbose=0)
    return
  variables = model.trainable_variables
  optimizer = model.optimizer
  for _ in range(STEPS):
    if entry == "minimize":
      spec.minimize(optimizer, lambda: _keras_loss(model), var_list=variables)
    else:
      with tf.GradientTape() as tape:
        loss = _keras_loss(model)
      grads = tape.gradient(loss, variables)
      spec.apply_gradients(optimizer, zip(grads, variables))


def _keras_run(package, directory, kind, entry, fmt, restore_from=None):
  """Builds and compiles the model (`entry` None: a plain Adam; "wrap": a
  wrapped one; else a plain Adam stepped by `spec.minimize` or
  `spec.apply_gradients`), loads `restore_from` (the optimizer built first,
  as Keras asks), trains, saves. Returns the path, the values loaded, the
  values after training, the iterations loaded and the load's status."""
  keras = KERAS[package]
  model = _keras_model(keras)
  variables = model.trainable_variables
  spec = _spec(kind, variables)
  optimizer = keras.optimizers.Adam(0.1)
  model.compile(optimizer=spec.wrap(optimizer) if entry == "wrap"
                else optimizer, loss="mse")
  status = None
  if restore_from is not None:
    model.optimizer.build(variables)
    status = model.load_weights(restore_from)
  start = [v.numpy() for v in variables]
  iterations = int(model.optimizer.iterations)
  _keras_train(model, spec, entry)
  end = [v.numpy() for v in variables]
  directory.mkdir()
  path = str(directory / ("model.weights.h5" if fmt == "weights.h5"
                          else "ckpt"))
  model.save_weights(path)
  return path, start, end, iterations, status


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", KERAS_ENTRIES)
@pytest.mark.parametrize("package, fmt", KERAS_CASES)
def test_keras_weights_plain_to_tfpartial_and_back(tmp_path, plain_run,
                                                   package, fmt, entry, kind):
  plain, _, plain_end, _, _ = plain_run(
      ("keras_weights", package, fmt, kind),
      lambda directory: _keras_run(package, directory, kind, None, fmt))
  _, start, end, iterations, status = _keras_run(
      package, tmp_path / "resumed", kind, entry, fmt, restore_from=plain)
  for restored, saved in zip(start, plain_end):
    helpers.assert_same_bits(restored, saved, "restored from plain")
  assert iterations == STEPS
  _check_frozen(kind, start, end, "frozen after resuming with tfpartial")
  assert _moved(start, end)
  if fmt == "tf":
    status.assert_consumed()
  # A weights file tfpartial wrote from the start, loaded without it.
  path, _, partial_end, _, _ = _keras_run(package, tmp_path / "partial",
                                          kind, entry, fmt)
  if _layout_kept(entry, kind):
    _, again, _, iterations, back = _keras_run(
        package, tmp_path / "again", kind, None, fmt, restore_from=path)
    for restored, saved in zip(again, partial_end):
      helpers.assert_same_bits(restored, saved, "restored from tfpartial")
    assert iterations == STEPS
    if fmt == "tf":
      back.assert_consumed()
  elif fmt == "tf":  # Documented: b's slots are missing.
    _, _, _, _, back = _keras_run(package, tmp_path / "again", kind, None,
                                  fmt, restore_from=path)
    with pytest.raises(AssertionError, match="not bound to checkpointed"):
      back.assert_existing_objects_matched()
  else:  # Keras keeps optimizer state by position: it skips the file's
    # (with a warning; tf_keras only logs it), and starts it anew.
    with (pytest.warns(UserWarning, match="Skipping variable loading for "
                       "optimizer") if package == "keras3"
          else contextlib.nullcontext()):
      _, again, _, iterations, _ = _keras_run(
          package, tmp_path / "again", kind, None, fmt, restore_from=path)
    for restored, saved in zip(again, partial_end):
      helpers.assert_same_bits(restored, saved, "model restored all the same")
    assert iterations == 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("package", sorted(KERAS))
def test_keras_archive_of_a_plain_run_resumes_with_tfpartial(tmp_path,
                                                             package, kind):
  """`load_model` gives the plain optimizer with its state; wrapping it
  keeps that state (the wrapped copy shares it) and trains on."""
  keras = KERAS[package]
  model = _keras_model(keras)
  model.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse")
  _keras_train(model, None, None)
  model.save(tmp_path / "plain.keras")
  loaded = keras.models.load_model(tmp_path / "plain.keras")
  assert tfpartial.spec_of(loaded) is None
  variables = loaded.trainable_variables
  start = [v.numpy() for v in variables]
  for restored, saved in zip(start, [v.numpy() for v in
                                     model.trainable_variables]):
    helpers.assert_same_bits(restored, saved, "loaded")
  spec = _spec(kind, variables)
  loaded.compile(optimizer=spec.wrap(loaded.optimizer), loss="mse")
  assert tfpartial.spec_of(loaded) == spec
  assert int(loaded.optimizer.iterations) == STEPS
  _keras_train(loaded, spec, "wrap")
  assert int(loaded.optimizer.iterations) == 2 * STEPS
  end = [v.numpy() for v in variables]
  _check_frozen(kind, start, end, "frozen after resuming with tfpartial")
  assert _moved(start, end)


WITHOUT_TFPARTIAL = """
import json, sys, warnings
sys.modules["tfpartial"] = None  # As if tfpartial were not installed.
warnings.simplefilter("error")
warnings.filterwarnings("ignore", "__array__ implementation")
import numpy as np
if sys.argv[1] == "tf_keras":
  import tf_keras as keras
else:
  import keras
path = sys.argv[2]
report = {}
try:
  keras.models.load_model(path)
  report["load_model"] = "loaded"
except Exception as error:  # pylint: disable=broad-except
  report["load_model"] = f"{type(error).__name__}: {error}"[:300]
weights_only = keras.models.load_model(path, compile=False)
report["compile_false"] = [
    v.numpy().ravel().tolist() for v in weights_only.trainable_variables]
model = keras.Sequential([
    keras.Input((2,), dtype="int32"), keras.layers.Embedding(5, 3),
    keras.layers.Flatten(), keras.layers.Dense(2)])
model.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse")
model.optimizer.build(model.trainable_variables)
model.load_weights(path)
report["load_weights"] = [
    v.numpy().ravel().tolist() for v in model.trainable_variables]
report["iterations"] = int(model.optimizer.iterations)
model.fit(np.array([[0, 3]]), np.zeros((1, 2)), verbose=0)
report["iterations_after"] = int(model.optimizer.iterations)
print(json.dumps(report))
"""


@pytest.mark.parametrize("package", sorted(KERAS))
def test_keras_archive_written_with_tfpartial_loads_without_it(tmp_path,
                                                               package):
  """Dropping tfpartial from a `.keras` archive: its config names the
  wrapped class, which `load_model` cannot find without tfpartial; the
  weights, optimizer state included, load into the model compiled with the
  plain optimizer (`load_weights`), or alone (`compile=False`)."""
  import json  # pylint: disable=g-import-not-at-top
  import os  # pylint: disable=g-import-not-at-top
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  keras = KERAS[package]
  model = _keras_model(keras)
  spec = _spec("whole", model.trainable_variables)
  model.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.1)), loss="mse")
  _keras_train(model, spec, "wrap")
  path = tmp_path / "partial.keras"
  model.save(path)
  saved = [v.numpy().ravel().tolist() for v in model.trainable_variables]
  result = processes.run(
      [sys.executable, "-c", WITHOUT_TFPARTIAL, package, str(path)],
      timeout=300,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode == 0, result.stderr[-3000:]
  report = json.loads(result.stdout.strip().splitlines()[-1])
  assert "PartialAdam" in report["load_model"], report["load_model"]
  assert report["compile_false"] == saved
  assert report["load_weights"] == saved
  assert report["iterations"] == STEPS
  assert report["iterations_after"] == STEPS + 1
