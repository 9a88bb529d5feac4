"""`verify` with a spec `to_json` wrote from a live Keras model ("saved").

A model built as keras_hub builds its models (layers held in private
attributes of custom layers, a functional backbone inside a subclassed
task): its files do not name its variables, and a LayerNormalization's
gamma and beta have one shape. `to_json` records where the model saves each
variable in each kind of file; verify finds it there in `.weights.h5`,
`.keras` and `tf.train.Checkpoint` files (before and after `compile`, of
the model, of a model holding it or held by it), refuses a file of another
model, and says why where a file does not hold a variable. Hand-written
pattern specs against files that do not name their variables are refused
saying what to pass instead. (keras_hub itself: test_verify_keras_hub.py.)
"""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial import cli

pytestmark = helpers.needs_keras_3


class Block(keras.layers.Layer):
  """A transformer-style block: its layers in private attributes."""

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self._norm = keras.layers.LayerNormalization(name="norm")
    self._dense = keras.layers.Dense(4, name="ffn")
    self._dropout = keras.layers.Dropout(0.1, name="drop")

  def call(self, x, training=None):
    return x + self._dropout(self._dense(self._norm(x)), training=training)


class Task(keras.Model):
  """A subclassed model holding a functional backbone, as keras_hub's."""

  def __init__(self, backbone, **kwargs):
    inputs = keras.Input((4,))
    outputs = keras.layers.Dense(2, name="logits")(backbone(inputs))
    super().__init__(inputs, outputs, **kwargs)
    self.backbone = backbone


def _task():
  keras.utils.set_random_seed(0)
  inputs = keras.Input((4,))
  x = keras.layers.Dense(4, name="embed")(inputs)
  for i in range(2):
    x = Block(name=f"block_{i}")(x)
  backbone = keras.Model(inputs, x, name="backbone")
  return Task(backbone, name="task")


DATA = (np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32),
        np.array([0, 1] * 4))
PATTERN = {"**": {"freeze": "...", "exclude": ["**/bias", "block_1/**"]}}


def _save(model, folder, tag):
  folder.mkdir(parents=True, exist_ok=True)
  model.save_weights(folder / f"{tag}.weights.h5")
  model.save(folder / f"{tag}.keras")
  tf.train.Checkpoint(model=model).write(str(folder / tag / "ckpt"))
  return (folder / f"{tag}.weights.h5", folder / f"{tag}.keras",
          folder / tag / "ckpt")


def _fit(model, optimizer):
  model.compile(optimizer=optimizer, loss=keras.losses.
                SparseCategoricalCrossentropy(from_logits=True))
  model.fit(*DATA, epochs=2, batch_size=4, verbose=0, shuffle=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  """The task fine-tuned with a pattern spec, a frozen gamma changed beside
  its unchanged beta, and the same run with plain AdamW; each saved in the
  three kinds of file."""
  folder = tmp_path_factory.mktemp("task")
  model = _task()
  model(DATA[0])
  (folder / "pattern.json").write_text(json.dumps(PATTERN))
  spec = tfpartial.load_spec(str(folder / "pattern.json"), model)
  spec.to_json(folder / "spec.json")
  initial = [variable.numpy() for variable in model.weights]
  files = {"before": _save(model, folder, "before")}
  _fit(model, spec.wrap(keras.optimizers.AdamW(0.05)))
  files["after"] = _save(model, folder, "after")
  gamma = next(v for v in model.weights if v.path == "block_0/norm/gamma")
  gamma.assign(gamma.numpy() + np.array([0.5, 0, 0, 0], np.float32))
  files["gamma"] = _save(model, folder, "gamma")
  for variable, value in zip(model.weights, initial):
    variable.assign(value)
  _fit(model, keras.optimizers.AdamW(0.05))
  files["plain"] = _save(model, folder, "plain")
  return folder, model, files


def _verify(capsys, before, after, spec, *flags):
  code = cli.main(["verify", str(before), str(after), "--spec", str(spec),
                   *flags])
  out, err = capsys.readouterr()
  return code, out, err


KINDS = ("weights", "keras", "checkpoint")


def test_to_json_says_where_the_model_saves_each_variable(runs):
  folder, model, _ = runs
  written = json.loads((folder / "spec.json").read_text())
  assert written["block_0/norm/beta"]["saved"] == {
      "h5": "layers/functional/layers/block/_norm/vars/1",
      "checkpoint": "backbone/_operations/2/_norm/beta"}
  assert written["embed/kernel"]["saved"] == {
      "h5": "layers/functional/layers/dense/vars/0",
      "checkpoint": "backbone/_operations/1/_kernel"}
  # A dropout's seed is in no file (its name is numbered process-wide).
  seeds = [v.path for v in model.variables if "seed_generator_state" in v.path]
  assert len(seeds) == 2 and all(written[s]["saved"] == {} for s in seeds)
  assert tfpartial.load_spec(str(folder / "spec.json"), model) == (
      tfpartial.load_spec(str(folder / "pattern.json"), model))


@pytest.mark.parametrize("kind", range(3), ids=KINDS)
def test_a_fine_tune_verifies_and_a_change_or_a_plain_run_is_caught(
    runs, capsys, kind):
  folder, _, files = runs
  spec = folder / "spec.json"
  code, out, err = _verify(capsys, files["before"][kind],
                           files["after"][kind], spec)
  assert code == 0, out + err
  rows = {line.split()[0]: line.split() for line in out.splitlines()[3:]
          if "/" in line.split()[0]}
  assert rows["block_0/norm/gamma"][-3:] == ["0", "-", "0/0"], out
  assert "not in the files: 2 variable(s) the model saves in no file" in out
  code, out, err = _verify(capsys, files["before"][kind],
                           files["gamma"][kind], spec)
  assert code == 1, out + err
  assert [line for line in out.splitlines() if "FAILED" in line] == [
      "FAILED: 1 frozen element(s) of 'block_0/norm/gamma' changed, the "
      "largest by 0.5"], out
  code, out, err = _verify(capsys, files["before"][kind],
                           files["plain"][kind], spec)
  assert code == 1, out + err
  assert "FAILED: 16 frozen element(s) of 'embed/kernel' changed" in out


@pytest.mark.parametrize("kind", range(3), ids=KINDS)
def test_a_layer_norm_alone_is_told_from_its_twin_in_the_other_block(
    runs, capsys, tmp_path, kind):
  """Two variables of one layer: their places fit either block's layer
  once the path to the block is dropped, but a file is of one model, read
  one way: the spec's block, not its twin."""
  _, model, files = runs
  by_path = {variable.path: variable for variable in model.weights}
  spec = (tfpartial.freeze(by_path["block_0/norm/gamma"])
          | tfpartial.freeze(by_path["block_0/norm/beta"], 0))
  spec.to_json(tmp_path / "norm.json")
  code, out, err = _verify(capsys, files["before"][kind], files["after"][kind],
                           tmp_path / "norm.json")
  assert code == 0, out + err
  code, out, err = _verify(capsys, files["before"][kind], files["gamma"][kind],
                           tmp_path / "norm.json")
  assert code == 1, out + err
  assert "FAILED: 1 frozen element(s) of 'block_0/norm/gamma'" in out, out
  assert "FAILED" not in out.split("block_0/norm/gamma' changed")[1], out


def test_a_file_of_a_model_held_or_holding_verifies(runs, capsys, tmp_path):
  """The backbone saved alone; the task inside another model."""
  folder, model, files = runs
  spec = tfpartial.load_spec(str(folder / "spec.json"), model)
  backbone_only = {name: entry for name, entry in json.loads(
      spec.to_json()).items() if not name.startswith("logits")}
  (tmp_path / "backbone.json").write_text(json.dumps(backbone_only))
  model.backbone.save_weights(tmp_path / "backbone.weights.h5")
  tf.train.Checkpoint(net=model.backbone).write(str(tmp_path / "b" / "ckpt"))
  for before in (tmp_path / "backbone.weights.h5", tmp_path / "b" / "ckpt"):
    after = helpers.copy_of(before) if before.suffix else before
    if not before.suffix:
      after = tf.train.Checkpoint(net=model.backbone).write(
          str(tmp_path / "b2" / "ckpt"))
    code, out, err = _verify(capsys, before, after, tmp_path / "backbone.json")
    assert code == 0, out + err
  outer = keras.Sequential([keras.Input((4,)), model], name="outer")
  outer.save_weights(tmp_path / "outer.weights.h5")
  code, out, err = _verify(capsys, tmp_path / "outer.weights.h5",
                           helpers.copy_of(tmp_path / "outer.weights.h5"),
                           folder / "spec.json")
  assert code == 0, out + err
  assert "block_0/norm/gamma" in out


def test_a_file_of_another_model_is_refused(runs, capsys, tmp_path):
  folder, _, files = runs
  other = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4)])
  other.save_weights(tmp_path / "other.weights.h5")
  code, out, err = _verify(capsys, tmp_path / "other.weights.h5",
                           files["after"][0], folder / "spec.json")
  assert code == 2, out + err
  assert "it is not a file of that model" in err, err
  assert "the spec says the model it was written from saves" in err, err


def test_a_variable_a_file_kind_does_not_hold_is_exit_2_saying_why(tmp_path,
                                                                  capsys):
  """With LoRA on, Keras writes a kernel merged with its factors: the
  spec says so (no "h5" place), and verify refuses rather than compare."""
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)],
                           name="tuned")
  model.layers[0].enable_lora(1)
  kernel = next(v for v in model.weights if v.path.endswith("/kernel"))
  tfpartial.freeze(kernel).to_json(tmp_path / "spec.json")
  saved = json.loads((tmp_path / "spec.json").read_text())[kernel.path][
      "saved"]
  assert set(saved) == {"checkpoint"}, saved
  model.save_weights(tmp_path / "m.weights.h5")
  code, out, err = _verify(capsys, tmp_path / "m.weights.h5",
                           helpers.copy_of(tmp_path / "m.weights.h5"),
                           tmp_path / "spec.json")
  assert code == 2, out + err
  assert ("the spec says the model it was written from does not save it so "
          "in this kind of file (its \"saved\" has no \"h5\" place") in err


def test_a_hand_written_pattern_is_refused_where_the_file_cannot_name(
    runs, capsys):
  folder, _, files = runs
  for kind, instead in (
      (0, "Pass the model's .keras archive"),
      (1, "Verify with a spec written by to_json() from the model"),
      (2, "A tf.train.Checkpoint names a Keras variable by its path through "
          "the object graph")):
    code, out, err = _verify(capsys, files["before"][kind],
                             files["after"][kind], folder / "pattern.json")
    assert code == 2, out + err
    assert instead in err, err
  code, out, err = _verify(capsys, files["before"][0], files["after"][0],
                           folder / "pattern.json")
  assert "the spec's pattern '**' may match variables that" in err, err
  assert "block/_norm/0" in err or "norm/0" in err, err


def test_a_hand_written_pattern_verifies_where_the_file_names_all(tmp_path,
                                                                  capsys):
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4),
                            keras.layers.LayerNormalization(name="norm"),
                            keras.layers.Dense(2, name="out")], name="plain")
  model.save_weights(tmp_path / "before.weights.h5")
  norm = model.layers[1]
  norm.gamma.assign([2.0, 2.0, 2.0, 2.0])
  model.save_weights(tmp_path / "after.weights.h5")
  (tmp_path / "spec.json").write_text(json.dumps(
      {"**": {"freeze": "...", "exclude": ["**/bias", "**/gamma"]}}))
  code, out, err = _verify(capsys, tmp_path / "before.weights.h5",
                           tmp_path / "after.weights.h5",
                           tmp_path / "spec.json", "--explain")
  assert code == 0, out + err
  explained = next(line for line in out.splitlines() if "->" in line)
  assert explained.startswith("** (less **/bias, **/gamma) -> "), out
  assert sorted(explained.split(" -> ")[1].split(", "))[1:] == [
      "plain/norm/beta", "plain/out/kernel"], out
  (tmp_path / "spec.json").write_text(json.dumps(
      {"**": {"freeze": "...", "exclude": ["**/bias"]}}))
  code, out, err = _verify(capsys, tmp_path / "before.weights.h5",
                           tmp_path / "after.weights.h5",
                           tmp_path / "spec.json")
  assert code == 1, out + err
  assert "FAILED: 4 frozen element(s) of 'plain/norm/gamma'" in out


@pytest.mark.parametrize("entry, message", [
    ({"**/bias": {"train_only": "..."}},
     'To train only the biases, write {"**": {"freeze": "...", "exclude": '
     '["**/bias"]}}.'),
    ({"**": {"freeze": "...", "exclude": ["**/bais"]}},
     "the exclusion '**/bais' of the spec's entry '**' excludes none of the "
     "5 name(s) the key matches"),
    ({"**/bias": {"train_only": "0"}},
     "the spec's entry '**/bias' freezes nothing: \"train_only\" freezes the "
     "elements its index does not select, and its index selects every "
     "element of each of the 2 variable(s) it matches."),
])
def test_an_entry_that_freezes_nothing_is_exit_2(tmp_path, capsys, entry,
                                                 message):
  variables = {"dense/kernel": tf.Variable(tf.ones([2, 3])),
               "dense/bias": tf.Variable(tf.ones([1, 3])),
               "out/kernel": tf.Variable(tf.ones([3, 1])),
               "out/bias": tf.Variable(tf.ones([1, 1])),
               "emb": tf.Variable(tf.ones([4, 2]))}
  checkpoint = tf.train.Checkpoint(dense=tf.Module(), out=tf.Module())
  for name, variable in variables.items():
    holder, _, leaf = name.rpartition("/")
    setattr(getattr(checkpoint, holder) if holder else checkpoint, leaf,
            variable)
  path = checkpoint.write(str(tmp_path / "ckpt"))
  (tmp_path / "spec.json").write_text(json.dumps(entry))
  code, out, err = _verify(capsys, path, checkpoint.write(
      str(tmp_path / "again")), tmp_path / "spec.json")
  assert code == 2 and not out, out + err
  assert message in err, err


def test_verify_matches_repeated_double_stars_in_linear_time(tmp_path,
                                                             capsys):
  """`**/` 14 times against a name 20 segments deep that it does not
  match: a backtracking matcher tries every way of splitting the segments
  among the `**` (C(34, 14), about 10^9: hours; verify took 72 s with 10
  repeats and never ended with 14); the automaton, a step per
  character."""
  checkpoint = tf.train.Checkpoint(v0=tf.Variable(tf.ones([2])))
  node = checkpoint
  for _ in range(20):
    node.a = tf.Module()
    node = node.a
  node.x = tf.Variable(tf.ones([2]))
  before = checkpoint.write(str(tmp_path / "before"))
  (tmp_path / "spec.json").write_text(json.dumps(
      {"**/" * 14 + "v?": {"freeze": "0"}}))
  code, out, err = _verify(capsys, before, checkpoint.write(
      str(tmp_path / "after")), tmp_path / "spec.json", "--explain")
  assert code == 0, out + err
  assert f"{'**/' * 14}v? -> v0" in out, out
