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

import os
import pathlib
import shutil
import sys

import pytest

import processes

HERE = pathlib.Path(__file__).parent
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}

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
  others = np.arange(PLACEHOLDER)
  held = np.array_equal(after[others].view(np.uint32),
                        before[others].view(np.uint32))
  trained = not np.array_equal(after[PLACEHOLDER], before[PLACEHOLDER])
  return held, trained, after


from ti import finetuner, finetuner_original
old = run(finetuner_original)
new = run(finetuner)
print("original held:", old[0], "trained:", old[1])
print("port held:", new[0], "trained:", new[1])
print("same:", np.array_equal(old[2].view(np.uint32), new[2].view(np.uint32)))
'''


def _run(args, folder, timeout):
  return processes.run(args, cwd=folder, timeout=timeout, env=ENV)


def test_the_textual_inversion_port_applies_and_holds_the_other_rows(
    tmp_path):
  if shutil.which("git") is None or shutil.which("patch") is None:
    pytest.fail("git and patch are needed to test that the diff applies")
  package = tmp_path / "ti"
  package.mkdir()
  (package / "__init__.py").write_text("")
  (package / "utils.py").write_text(UTILS)
  for name in ("finetuner.py", "finetuner_original.py"):
    shutil.copy(HERE / "scan_real" / "textual_inversion_finetuner.py.txt",
                package / name)
  diff = _run([sys.executable, "-m", "tfpartial", "scan", "--diff",
               "ti/finetuner.py"], tmp_path, timeout=60)
  assert diff.returncode == 1, diff.stderr
  assert "finetuner.py:49" not in diff.stderr, diff.stderr  # Not by hand.
  (tmp_path / "port.diff").write_text(diff.stdout)
  check = _run(["git", "apply", "--check", "port.diff"], tmp_path,
               timeout=60)
  assert check.returncode == 0, check.stderr
  applied = _run(["patch", "-p1", "-i", "port.diff"], tmp_path, timeout=60)
  assert applied.returncode == 0, applied.stdout + applied.stderr
  ported = (package / "finetuner.py").read_text()
  assert "tf.where(condition" not in ported, ported
  assert "tfpartial.train_only(trainable_weights[0], 49408)" in ported
  assert "spec.apply_gradients(self.optimizer," in ported, ported
  (tmp_path / "run.py").write_text(RUN)
  result = _run([sys.executable, "run.py"], tmp_path, timeout=300)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.splitlines() == [
      "original held: True trained: True",
      "port held: True trained: True",
      "same: True"], result.stdout
