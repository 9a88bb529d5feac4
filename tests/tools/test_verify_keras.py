"""`verify` on Keras 3 files, with the names `spec.to_json()` writes.

Every variable of each model shape users build (Sequential, functional,
subclassed, nested sub-models, Embedding + Dense, normalization layers) is
found in `.weights.h5` and `.keras` files by its `path`, holding its own
bits; a `to_json` spec then verifies a `fit` run (exit 0) and catches a
frozen element changed by hand (exit 1).
"""

import json

import keras
import numpy as np
import pytest

import helpers
import tfpartial
from tfpartial import cli
from tfpartial._tools.verify import _verify as verify_module

pytestmark = helpers.needs_keras_3


def _sequential():
  return keras.Sequential([
      keras.Input((4,), dtype="int32"), keras.layers.Embedding(20, 3),
      keras.layers.Flatten(), keras.layers.Dense(2)], name="tagger"), (
          np.arange(8, dtype=np.int32).reshape(2, 4) % 20)


def _functional():
  inputs = keras.Input((3,))
  x = keras.layers.Dense(4, name="hidden")(inputs)
  x = keras.layers.BatchNormalization()(x)
  x = keras.layers.LayerNormalization()(x)
  x = keras.layers.Conv1D(2, 2)(keras.layers.Reshape((4, 1))(x))
  outputs = keras.layers.Dense(2)(keras.layers.Flatten()(x))
  return keras.Model(inputs, outputs, name="net"), np.ones((2, 3))


def _nested():
  """Sub-models inside a functional model: one functional, one Sequential."""
  encoder_inputs = keras.Input((3,))
  encoder = keras.Model(
      encoder_inputs, keras.layers.Dense(4, name="encode")(encoder_inputs),
      name="encoder")
  head = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, name="out"),
                           keras.layers.BatchNormalization(name="norm")],
                          name="head")
  inputs = keras.Input((3,))
  return keras.Model(inputs, head(encoder(inputs)), name="both"), np.ones(
      (2, 3))


class _Subclassed(keras.Model):
  """Own variables, attribute layers, a list of layers, an inner Sequential."""

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.dense = keras.layers.Dense(4)
    self.blocks = [keras.layers.Dense(4, use_bias=False),
                   keras.layers.LayerNormalization()]
    self.inner = keras.Sequential([keras.layers.Dense(3),
                                   keras.layers.BatchNormalization()])
    self.scale = self.add_weight(shape=(3,), name="scale", initializer="ones")
    self.offset = keras.Variable(np.zeros(5, np.float32), name="offset")

  def call(self, x):
    x = self.dense(x)
    for block in self.blocks:
      x = block(x)
    return self.inner(x) * self.scale + keras.ops.sum(self.offset)


def _subclassed():
  model = _Subclassed(name="custom")
  model(np.ones((2, 3), np.float32))
  return model, np.ones((2, 3))


def _attention_and_recurrent():
  """Layers made of layers (MultiHeadAttention's EinsumDense), and cells
  whose kernel and recurrent kernel have one shape (8 inputs, 8 units)."""
  inputs = keras.Input((5, 8))
  x = keras.layers.MultiHeadAttention(2, 4, name="attend")(inputs, inputs)
  x = keras.layers.LSTM(8, return_sequences=True)(x)
  return keras.Model(inputs, keras.layers.GRU(8)(x), name="rnn"), np.ones(
      (1, 5, 8))


class _Block(keras.layers.Layer):
  """A transformer-style block: its layers are attributes, not a list."""

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.attention = keras.layers.MultiHeadAttention(2, 4)
    self.norm = keras.layers.LayerNormalization()
    self.feed = keras.layers.Dense(8)

  def call(self, x):
    return self.feed(self.norm(x + self.attention(x, x)))


class _Transformer(keras.Model):

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.embed = keras.layers.Embedding(10, 8)
    self.first, self.second = _Block(name="b1"), _Block(name="b2")

  def call(self, tokens):
    return self.second(self.first(self.embed(tokens)))


MODELS = {"sequential_embedding_dense": _sequential,
          "functional_normalization_conv": _functional,
          "nested_sub_models": _nested, "subclassed": _subclassed,
          "attention_lstm_gru": _attention_and_recurrent,
          "transformer_blocks": lambda: (_Transformer(name="transformer"),
                                         np.zeros((1, 5), np.int32))}


def _built(kind):
  model, inputs = MODELS[kind]()
  model(inputs)  # Built, whatever the kind.
  rng = np.random.default_rng(0)
  for variable in model.weights:  # Distinct values: a mix-up shows.
    variable.assign(rng.normal(size=variable.shape).astype(variable.dtype))
  return model, inputs


def _save(model, directory, tag):
  directory.mkdir(exist_ok=True)
  model.save_weights(directory / f"{tag}.weights.h5")
  model.save(directory / f"{tag}.keras")
  return directory / f"{tag}.weights.h5", directory / f"{tag}.keras"


@pytest.mark.parametrize("kind", MODELS)
def test_every_variable_is_found_by_its_path_with_its_own_bits(tmp_path,
                                                              kind):
  model, _ = _built(kind)
  paths = [variable.path for variable in model.weights]
  assert len(set(paths)) == len(paths), paths
  for file in _save(model, tmp_path, "model"):
    reader = verify_module.open_checkpoint(str(file))
    try:
      for variable in model.weights:
        stored = reader.find(variable.path, tuple(variable.shape))
        helpers.assert_same_bits(reader.read(stored), variable.numpy(),
                                 f"{variable.path} in {file.name}")
    finally:
      reader.close()


def _verify(capsys, before, after, spec):
  code = cli.main(["verify", str(before), str(after), "--spec", str(spec)])
  out, err = capsys.readouterr()
  return code, out, err


def _partial_spec(model):
  """Part of the first kernel or table, a whole bias, a normalization's
  gamma and the model's own weight, where the model has them."""
  by_path = {variable.path: variable for variable in model.weights}
  spec = None
  for path, variable in by_path.items():
    leaf = path.rsplit("/", 1)[-1]
    index = {"embeddings": np.s_[:5], "kernel": 0, "scale": 2,
             "offset": np.s_[1:3]}.get(leaf)
    part = None
    if index is not None:
      part = tfpartial.freeze(variable, index)
    elif leaf == "gamma":
      part = tfpartial.train_only(variable, 1)
    elif leaf == "bias" and "hidden" in path:
      part = tfpartial.freeze(variable)
    if part is not None:
      spec = part if spec is None else spec | part
  return spec


@pytest.mark.parametrize("kind", list(MODELS)[:4])
def test_to_json_then_verify_a_fit_run_and_catch_a_change(tmp_path, capsys,
                                                          kind):
  model, inputs = _built(kind)
  spec = _partial_spec(model)
  spec_path = tmp_path / "spec.json"
  spec.to_json(spec_path)
  names = list(json.loads(spec_path.read_text()))
  before = _save(model, tmp_path, "before")
  model.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.1)), loss="mse")
  outputs = model.predict(inputs, verbose=0)
  model.fit(inputs, outputs + 1.0, epochs=2, verbose=0)
  after = _save(model, tmp_path, "after")
  for first, second in zip(before, after):
    code, out, err = _verify(capsys, first, second, spec_path)
    assert code == 0, out + err
    rows = {line.split()[0]: line.split() for line in out.splitlines()[3:]}
    for name in names:
      assert rows[name][-3] == "0", out  # Frozen elements changed: none.
    moved = sum(int(rows[name][-1].split("/")[0]) for name in names)
    assert moved > 0, out  # Training did move the trainable elements.
  # Change one frozen element by hand: every file kind catches it.
  variable = next(v for v in model.weights if v.path == names[0])
  mask = spec.frozen_mask(variable)
  value = variable.numpy()
  value[np.unravel_index(np.flatnonzero(mask)[0], mask.shape)] += 0.25
  variable.assign(value)
  tampered = _save(model, tmp_path, "tampered")
  for first, second in zip(before, tampered):
    code, out, err = _verify(capsys, first, second, spec_path)
    assert code == 1, out + err
    assert f"FAILED: 1 frozen element(s) of '{names[0]}' changed" in out, out


def test_a_keras_archive_against_a_weights_file(tmp_path, capsys):
  """Both hold the same variables under the same names."""
  model, _ = _built("nested_sub_models")
  weights, archive = _save(model, tmp_path, "model")
  spec = tfpartial.freeze(model.get_layer("head").get_layer("norm").gamma, 0)
  spec.to_json(tmp_path / "spec.json")
  code, out, err = _verify(capsys, archive, weights, tmp_path / "spec.json")
  assert code == 0, out + err
  assert "head/norm/gamma" in out, out


def test_same_shaped_variables_of_a_layer_nothing_names_are_told_by_to_json(
    tmp_path, capsys):
  """A subclassed model's attribute layer (one whose attribute sorts before
  `layers`: Keras writes the others in the list of its layers) is keyed by
  the attribute: the file does not say its class, so BatchNormalization's
  four (3,) variables cannot be told apart by name. A hand-written name is
  an error listing them; by position they can be named; a spec `to_json`
  wrote says where the model saves each, and verifies."""

  class WithNorm(keras.Model):

    def __init__(self, **kwargs):
      super().__init__(**kwargs)
      self.bn = keras.layers.BatchNormalization(name="norm")

    def call(self, x):
      return self.bn(x)

  model = WithNorm(name="with_norm")
  model(np.ones((2, 3), np.float32))
  weights, archive = _save(model, tmp_path, "model")
  (tmp_path / "by_hand.json").write_text(
      '{"with_norm/norm/beta": {"freeze": "0"}}')
  for file in (weights, archive):
    code, out, err = _verify(capsys, file, helpers.copy_of(file),
                             tmp_path / "by_hand.json")
    assert code == 2, out + err
    assert "'with_norm/norm/beta' could be any of 4 variables" in err, err
    assert "bn/vars/3 (3,) in layer 'norm' of 'with_norm'" in err, err
  (tmp_path / "by_position.json").write_text(
      '{"with_norm/norm/1": {"freeze": "0"}}')
  code, out, err = _verify(capsys, weights, helpers.copy_of(weights),
                           tmp_path / "by_position.json")
  assert code == 0, out + err
  tfpartial.freeze(model.bn.beta, 0).to_json(tmp_path / "spec.json")
  model.bn.gamma.assign([5.0, 5.0, 5.0])  # Beside the frozen beta.
  changed = _save(model, tmp_path, "gamma")
  model.bn.beta.assign([5.0, 0.0, 0.0])
  both = _save(model, tmp_path, "both")
  for first, second, third in zip((weights, archive), changed, both):
    code, out, err = _verify(capsys, first, second, tmp_path / "spec.json")
    assert code == 0, out + err
    code, out, err = _verify(capsys, first, third, tmp_path / "spec.json")
    assert code == 1, out + err
    assert "FAILED: 1 frozen element(s) of 'with_norm/norm/beta'" in out


def test_bfloat16_weights_in_a_weights_file_are_compared_by_bits(tmp_path,
                                                                  capsys):
  """HDF5 has no bfloat16: Keras writes 2 opaque bytes marked "bfloat16"."""
  model = keras.Sequential([keras.Input((2,)),
                            keras.layers.Dense(2, dtype="bfloat16")],
                           name="half")
  kernel = model.layers[0].kernel
  kernel.assign(np.array([[np.nan, -0.0], [1.0, 2.0]], np.float32))
  spec = tfpartial.freeze(kernel, 0)
  spec.to_json(tmp_path / "spec.json")
  model.save_weights(tmp_path / "before.weights.h5")
  kernel.assign(np.array([[np.nan, -0.0], [3.0, 4.0]], np.float32))
  model.save_weights(tmp_path / "after.weights.h5")
  code, out, err = _verify(capsys, tmp_path / "before.weights.h5",
                           tmp_path / "after.weights.h5",
                           tmp_path / "spec.json")
  assert code == 0, out + err
  assert out.splitlines()[3].split()[-3:] == ["0", "-", "2/2"], out
  kernel.assign(np.array([[np.nan, 0.0], [3.0, 4.0]], np.float32))
  model.save_weights(tmp_path / "after.weights.h5")
  code, out, err = _verify(capsys, tmp_path / "before.weights.h5",
                           tmp_path / "after.weights.h5",
                           tmp_path / "spec.json")
  assert code == 1, out + err
  assert "FAILED: 1 frozen element(s) of 'half/dense" in out, out
  assert "changed, the largest by 0" in out, out


def test_a_lora_kernel_is_not_taken_for_the_kernel(tmp_path, capsys):
  """With LoRA on, Keras writes kernel + A @ B where the kernel was: not
  the variable `kernel`. The archive's config says so; verify refuses."""
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)],
                           name="tuned")
  model.layers[0].enable_lora(1)
  kernel = next(v for v in model.weights if v.path.endswith("/kernel"))
  # By hand: a spec `to_json` writes says where Keras saves it, which
  # test_verify_saved.py checks.
  (tmp_path / "spec.json").write_text(
      json.dumps({kernel.path: {"freeze": "..."}}))
  model.save(tmp_path / "model.keras")
  code, out, err = _verify(capsys, tmp_path / "model.keras",
                           helpers.copy_of(tmp_path / "model.keras"),
                           tmp_path / "spec.json")
  assert code == 2, out + err
  assert "is not a variable of" in err and "/kernel+lora" in err, err


def test_a_tf_checkpoint_of_a_sequential_names_its_kernel_anew_after_compile(
    tmp_path):
  """docs/guides/verify.md, what it cannot do: `tf.train.Checkpoint(model=
  ...)` names a Sequential model's kernel by the object graph's path, which
  `compile` changes (TensorFlow's doing), and neither is the Keras path."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])

  def kernel_keys(prefix):
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / prefix))
    return {name for name, shape in tf.train.list_variables(path)
            if shape == [3, 2] and "optimizer/_variables" not in name}

  before = kernel_keys("before")
  model.compile(optimizer="adam", loss="mse")
  model.fit(np.ones((2, 3)), np.ones((2, 2)), verbose=0)
  after = kernel_keys("after")
  assert before == {"model/_functional/_operations/1/_kernel/.ATTRIBUTES/"
                    "VARIABLE_VALUE"}
  assert after == {"model/optimizer/_trainable_variables/0/.ATTRIBUTES/"
                   "VARIABLE_VALUE"}
  assert not any(model.layers[0].kernel.path in key for key in before | after)
