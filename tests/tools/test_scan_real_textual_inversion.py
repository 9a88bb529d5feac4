"""`tfpartial scan --diff` on Keras' textual inversion: `train_step`
rebuilds the token embedding's `IndexedSlices` gradient with
`tf.where(indices == placeholder, values, 0)`, so that only the new
token's row trains. The port trains only that row with
`tfpartial.train_only(table, placeholder)`; it applies to the file as
published, runs under `model.fit`, and holds every other row bit for bit.

`scan_real/textual_inversion_finetuner.py.txt` is
`training_pipeline/models/finetuner.py` of
https://github.com/deep-diver/textual-inversion-pipeline at commit
bf0e0ea689bf31e12fc1b413bb7a94547a6ddde8 (Apache 2.0), copied verbatim (a
`.txt` so that nothing collects or imports it); it is the train step of
the keras.io textual inversion example. Its helpers (`.utils`) and the
Stable Diffusion models are small stand-ins here: a text encoder whose one
weight is a 49409-row token table, and models that read it.
"""

import json
import pathlib
import shutil

from tests.tools import real_ports

HERE = pathlib.Path(__file__).parent

UTILS = '''\
import tensorflow as tf


def get_pos_ids():
  return tf.constant([[0, 1, 2]])


def sample_from_encoder_outputs(outputs):
  mean, _ = tf.split(outputs, 2, axis=-1)
  return mean


def get_timestep_embedding(timestep):
  return tf.cast(tf.stack([timestep, 2 * timestep]), tf.float32)
'''

# The same few `fit` steps, from the same seed, with the train step as it
# was (`finetuner_original`) and as ported (`finetuner`).
RUN = '''\
import numpy as np
import tensorflow as tf
from tensorflow import keras

PLACEHOLDER = 49408


class TextEncoder(keras.Model):
  def __init__(self):
    super().__init__()
    self.table = self.add_weight(
        shape=(PLACEHOLDER + 1, 4), name="token_embedding",
        initializer=keras.initializers.RandomNormal(seed=1))

  def call(self, inputs):
    tokens, positions = inputs
    return tf.gather(self.table, tokens) + tf.cast(
        positions[..., None], tf.float32)


class Scheduler:
  train_timesteps = 10

  def add_noise(self, latents, noise, timesteps):
    return latents + 0.1 * noise


class StableDiffusion:
  def __init__(self):
    self.text_encoder = TextEncoder()
    self.diffusion_model = lambda inputs: inputs[0] * tf.reduce_mean(
        inputs[2], axis=[1, 2])[:, None, None, None] + tf.reduce_mean(
            inputs[1])


def run(module):
  tf.random.set_seed(3)
  sd = StableDiffusion()
  model = module.StableDiffusionFineTuner(
      sd, Scheduler(), lambda images: tf.concat([images, images], -1))
  model.compile(optimizer=keras.optimizers.Adam(0.1),
                loss=keras.losses.MeanSquaredError(reduction="none"))
  rng = np.random.RandomState(0)
  images = rng.normal(size=(8, 2, 2, 2)).astype(np.float32)
  tokens = np.concatenate([rng.randint(0, 40, (8, 2)),
                           np.full((8, 1), PLACEHOLDER)], 1)
  table = sd.text_encoder.table
  before = table.numpy()
  data = tf.data.Dataset.from_tensor_slices((images, tokens)).batch(4)
  model.fit(data, epochs=2, verbose=0)
  after = table.numpy()
  others = np.broadcast_to(np.arange(PLACEHOLDER + 1)[:, None] != PLACEHOLDER,
                           before.shape)
  return [(before, after, others)]


from ti import finetuner, finetuner_original
compare(finetuner_original, finetuner)
'''


def test_the_textual_inversion_port_applies_and_holds_the_other_rows(
    tmp_path):
  package = tmp_path / "ti"
  package.mkdir()
  (package / "__init__.py").write_text("")
  (package / "utils.py").write_text(UTILS)
  for name in ("finetuner.py", "finetuner_original.py"):
    shutil.copy(HERE / "scan_real" / "textual_inversion_finetuner.py.txt",
                package / name)
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "ti/finetuner.py", by_hand=["finetuner.py:49"]))
  ported = (package / "finetuner.py").read_text()
  assert "tf.where(condition" not in ported, ported
  assert "tfpartial.train_only(trainable_weights[0], 49408)" in ported
  assert "spec.apply_gradients(self.optimizer," in ported, ported
  real_ports.run_and_compare(tmp_path, RUN)


def test_the_notebook_form_is_ported_in_its_cells_and_holds(tmp_path):
  # keras.io publishes the example as a notebook too (part ten's
  # nicholasRenninger/salve trains it as one): the same train step in
  # cells, as Jupyter writes them, ported in the notebook's JSON. Run from
  # its cells, the port holds the other rows bit for bit.
  package = tmp_path / "ti"
  package.mkdir()
  (package / "__init__.py").write_text("")
  (package / "utils.py").write_text(UTILS)
  source = HERE / "scan_real" / "textual_inversion_finetuner.py.txt"
  shutil.copy(source, package / "finetuner_original.py")
  head, tail = source.read_text().split("\nclass ", 1)
  cells = ["%pip install -q keras-cv\n", head, "class " + tail]
  (package / "finetuner.ipynb").write_text(json.dumps({
      "cells": [{"cell_type": "code", "execution_count": None,
                 "metadata": {}, "outputs": [],
                 "source": cell.rstrip("\n").splitlines(True)}
                for cell in cells],
      "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "ti/finetuner.ipynb", by_hand=["finetuner.ipynb"]))
  notebook = json.loads((package / "finetuner.ipynb").read_text())
  assert notebook["cells"][0]["source"] == ["%pip install -q keras-cv"]
  code = "\n".join("".join(c["source"]) for c in notebook["cells"][1:])
  assert "tf.where(condition" not in code, code
  assert "tfpartial.train_only(trainable_weights[0], 49408)" in code
  (package / "finetuner.py").write_text(code + "\n")
  real_ports.run_and_compare(tmp_path, RUN)
