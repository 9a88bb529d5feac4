"""`verify` on keras_hub fine-tunes, in `.weights.h5`, `.keras` and
`tf.train.Checkpoint` files.

keras_hub's models are what `verify` could not check before: custom layers
holding built-in ones in private attributes, so that no file names a
LayerNormalization's gamma apart from its beta, nor one transformer layer
from the next. Each model is built small from its config (random weights:
nothing is downloaded), fine-tuned a step with a pattern spec bound to it
and written by `to_json`, and saved in the three kinds of file: verify
exits 0 on the tfpartial run, 1 naming the gamma changed beside its
unchanged beta, 1 on a plain AdamW run. Eager steps keep it cheap.
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
keras_hub = pytest.importorskip(
    "keras_hub", reason="keras_hub is not installed (the tf221 env has it)")

KINDS = ("weights", "keras", "checkpoint")


def _bert():
  backbone = keras_hub.models.BertBackbone(
      vocabulary_size=50, num_layers=2, num_heads=2, hidden_dim=8,
      intermediate_dim=16, max_sequence_length=16)
  model = keras_hub.models.BertTextClassifier(
      backbone=backbone, num_classes=2, preprocessor=None)
  rng = np.random.default_rng(0)
  inputs = {"token_ids": rng.integers(0, 50, (4, 8)).astype("int32"),
            "segment_ids": np.zeros((4, 8), "int32"),
            "padding_mask": np.ones((4, 8), bool)}
  return model, inputs, np.array([0, 1, 0, 1]), [
      "**/bias", "transformer_layer_1/**", "pooled_dense/*", "logits/*"]


def _gpt2():
  backbone = keras_hub.models.GPT2Backbone(
      vocabulary_size=50, num_layers=2, num_heads=2, hidden_dim=8,
      intermediate_dim=16, max_sequence_length=16)
  model = keras_hub.models.GPT2CausalLM(backbone=backbone, preprocessor=None)
  tokens = np.random.default_rng(0).integers(0, 50, (4, 8)).astype("int32")
  return model, {"token_ids": tokens, "padding_mask": np.ones((4, 8), bool)
                 }, tokens, ["**/bias", "transformer_layer_1/**",
                             "layer_norm/*"]


def _resnet():
  """BatchNormalization: four variables of one shape per layer."""
  backbone = keras_hub.models.ResNetBackbone(
      input_conv_filters=[64], input_conv_kernel_sizes=[3],
      stackwise_num_filters=[64, 8], stackwise_num_blocks=[1, 1],
      stackwise_num_strides=[1, 2], block_type="basic_block",
      use_pre_activation=False, image_shape=(16, 16, 3))
  model = keras_hub.models.ResNetImageClassifier(
      backbone=backbone, num_classes=2, preprocessor=None)
  images = np.random.default_rng(0).normal(size=(4, 16, 16, 3))
  return model, images.astype("float32"), np.array([0, 1, 0, 1]), [
      "**/bias", "**/moving_*", "stack1_*/**", "predictions/*"]


# Each model's frozen gamma to change beside its unchanged beta.
GAMMAS = {"bert": "transformer_layer_0/feedforward_layer_norm/gamma",
          "gpt2": "transformer_layer_0/self_attention_layer_norm/gamma",
          "resnet": "conv1_bn/gamma"}


def _save(model, folder, tag):
  model.save_weights(folder / f"{tag}.weights.h5")
  model.save(folder / f"{tag}.keras")
  tf.train.Checkpoint(model=model).write(str(folder / tag / "ckpt"))
  return (folder / f"{tag}.weights.h5", folder / f"{tag}.keras",
          folder / tag / "ckpt")


def _fine_tune(model, inputs, labels, optimizer):
  model.compile(optimizer=optimizer, run_eagerly=True, loss=(
      keras.losses.SparseCategoricalCrossentropy(from_logits=True)))
  model.fit(inputs, labels, epochs=2, batch_size=4, verbose=0,
            shuffle=False)


def _runs(kind, folder):
  """A pattern spec bound to the model and written by `to_json`; the
  model's files before, after a tfpartial fine-tune, with a frozen gamma
  then changed, and after a plain AdamW run from the same start."""
  model, inputs, labels, exclude = {"bert": _bert, "gpt2": _gpt2,
                                    "resnet": _resnet}[kind]()
  (folder / "pattern.json").write_text(json.dumps(
      {"**": {"freeze": "...", "exclude": exclude}}))
  spec = tfpartial.load_spec(str(folder / "pattern.json"), model)
  spec.to_json(folder / "spec.json")
  start = [variable.numpy() for variable in model.weights]
  files = {"before": _save(model, folder, "before")}
  _fine_tune(model, inputs, labels, spec.wrap(keras.optimizers.AdamW(0.01)))
  files["after"] = _save(model, folder, "after")
  gamma = next(v for v in model.weights if v.path == GAMMAS[kind])
  gamma.assign(gamma.numpy() + np.eye(1, gamma.shape[0], dtype="float32")[0])
  files["gamma"] = _save(model, folder, "gamma")
  for variable, value in zip(model.weights, start):
    variable.assign(value)
  _fine_tune(model, inputs, labels, keras.optimizers.AdamW(0.01))
  files["plain"] = _save(model, folder, "plain")
  return files


def _verify(capsys, before, after, spec):
  code = cli.main(["verify", str(before), str(after), "--spec", str(spec)])
  out, err = capsys.readouterr()
  return code, out, err


def _check_verdicts(capsys, kind, files, spec, position):
  before = files["before"][position]
  code, out, err = _verify(capsys, before, files["after"][position], spec)
  assert code == 0, out + err
  assert "0 variable(s)" not in out and "frozen changed" in out, out
  code, out, err = _verify(capsys, before, files["gamma"][position], spec)
  assert code == 1, out + err
  assert [line for line in out.splitlines() if line.startswith("FAILED")] == [
      f"FAILED: 1 frozen element(s) of '{GAMMAS[kind]}' changed, the "
      "largest by 1"], out
  code, out, err = _verify(capsys, before, files["plain"][position], spec)
  assert code == 1, out + err
  assert len([line for line in out.splitlines()
              if line.startswith("FAILED")]) > 3, out


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
  folder = tmp_path_factory.mktemp("bert")
  return folder, _runs("bert", folder)


@pytest.mark.parametrize("position", range(3), ids=KINDS)
def test_a_bert_fine_tune_verifies_in_every_kind_of_file(bert, capsys,
                                                         position):
  folder, files = bert
  _check_verdicts(capsys, "bert", files, folder / "spec.json", position)


def test_the_bert_files_alone_cannot_tell_gamma_from_beta(bert, capsys):
  """Why `to_json` writes "saved": without it, the names it writes are
  ambiguous in the Keras files and absent from the checkpoint, and a
  hand-written pattern is refused, saying what to pass instead."""
  folder, files = bert
  entry = json.loads((folder / "spec.json").read_text())[GAMMAS["bert"]]
  del entry["saved"]
  (folder / "names.json").write_text(json.dumps({GAMMAS["bert"]: entry}))
  for position, expected in enumerate((
      f"'{GAMMAS['bert']}' could be any of 2 variables",
      f"'{GAMMAS['bert']}' could be any of 2 variables",
      f"'{GAMMAS['bert']}' is not a variable of")):
    code, out, err = _verify(capsys, files["before"][position],
                             files["after"][position], folder / "names.json")
    assert code == 2, out + err
    assert expected in err, err
  for position, instead in enumerate((
      "Pass the model's .keras archive",
      "Verify with a spec written by to_json() from the model",
      "A tf.train.Checkpoint names a Keras variable by its path through the "
      "object graph")):
    code, out, err = _verify(capsys, files["before"][position],
                             files["after"][position],
                             folder / "pattern.json")
    assert code == 2, out + err
    assert instead in err, err


@pytest.mark.parametrize("kind", ["gpt2", "resnet"])
def test_gpt2_and_a_vision_backbone_verify_in_every_kind_of_file(
    tmp_path, capsys, kind):
  files = _runs(kind, tmp_path)
  for position in range(3):
    _check_verdicts(capsys, kind, files, tmp_path / "spec.json", position)
