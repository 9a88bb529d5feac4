"""`tfpartial scan --diff` on two textual inversions of one project, each
a form the keras.io example's copies do not take: a `tf.function` step
given its optimizer as an argument (one new token: `indices == 49408`),
and a Keras `train_step` training two new tokens (`tf.logical_or` of two
tests). The port trains only those rows (`tfpartial.train_only(table,
49408)`, `[49408, 49409]`); it applies to each file as published, runs,
and holds every other row of the token table bit for bit.

`scan_real/finetuning_four_emotions.py.txt` and
`finetuning_two_concepts.py.txt` are
`four_emotions/textual_inversion_four_emotions.py` and
`two_concepts/textual_inversion_two_concepts.py` of
https://github.com/tensorflow-project/FineTuning at commit
d8edddfc3986d433f6ec14587cdf6b68ffcf097a (the repository has no licence
file), copied verbatim (`.txt`, so that nothing collects or imports
them). They are Colab notebooks exported to `.py` (installs, Google Drive,
downloads, Stable Diffusion at top level): the run takes from each file
only its imports of TensorFlow, NumPy and `math`, its prompt length and
the functions and class of the training step, and the models are small
stand-ins, a text encoder whose one weight is a 49410-row token table.
"""

import pathlib
import shutil

import pytest

from tests.tools import real_ports

HERE = pathlib.Path(__file__).parent

STAND_INS = '''\
import ast
import types

import numpy as np
import tensorflow as tf
from tensorflow import keras

# Keras 3's `tf.keras.losses` lacks the function the file calls (Keras 2).
tf.keras.losses.mean_squared_error = lambda y, p: tf.reduce_mean(
    tf.square(y - p), axis=-1)
TOKENS = 49410
KEPT = ("math", "numpy", "tensorflow", "tfpartial", "MAX_PROMPT_LENGTH",
        "sample_from_encoder_outputs", "get_timestep_embedding",
        "get_position_ids", "textual_inversion", "StableDiffusionFineTuner")


def _kept(statement):
  names = [getattr(statement, "name", ""), getattr(statement, "module", "")]
  names += [getattr(a, "name", "") for a in getattr(statement, "names", ())]
  names += [getattr(t, "id", "") for t in getattr(statement, "targets", ())]
  return any(name in KEPT for name in names)


def load(path):
  """The file's training step and what it calls, as a module."""
  with open(path) as file:
    tree = ast.parse(file.read())
  module = types.ModuleType(path[:-3])
  body = [s for s in tree.body if _kept(s)]
  exec(compile(ast.Module(body, []), path, "exec"), module.__dict__)
  return module


class TextEncoder(keras.Model):
  def __init__(self):
    super().__init__()
    self.table = self.add_weight(
        shape=(TOKENS, 4), name="token_embedding",
        initializer=keras.initializers.RandomNormal(seed=1))

  def call(self, inputs):
    tokens, positions = inputs
    return tf.gather(self.table, tokens) + tf.cast(
        positions[..., None], tf.float32) * 0.01


class Scheduler:
  train_timesteps = 10

  def add_noise(self, latents, noise, timesteps):
    return latents + 0.1 * noise


class StableDiffusion:
  def __init__(self):
    self.text_encoder = TextEncoder()
    self.diffusion_model = lambda inputs: inputs[0] * tf.reduce_mean(
        inputs[2], axis=[1, 2])[:, None, None, None] + 0.01 * (
            tf.reduce_mean(inputs[1]))
    images = keras.Input((2, 2, 2))
    both = keras.layers.Concatenate()([images, images])
    self.image_encoder = keras.Model(
        images, keras.layers.Activation("linear")(both))


def batches(rng, new):
  for _ in range(3):
    images = rng.normal(size=(2, 2, 2, 2)).astype(np.float32)
    tokens = np.concatenate([rng.randint(0, 40, (2, 77 - len(new))),
                             np.tile(new, (2, 1))], 1)
    yield images, tokens


def held(before, after, new):
  others = ~np.isin(np.arange(TOKENS), new)[:, None]
  return [(before, after, np.broadcast_to(others, before.shape))]
'''

# The `tf.function` step, called as its `training` loop calls it.
FUNCTION = STAND_INS + '''

def run(module):
  tf.random.set_seed(3)
  sd = StableDiffusion()
  optimizer = keras.optimizers.Adam(0.1)
  before = sd.text_encoder.table.numpy()
  for data in batches(np.random.RandomState(0), [49408]):
    module.textual_inversion(
        sd, Scheduler(), data,
        lambda images: tf.concat([images, images], -1), optimizer)
  return held(before, sd.text_encoder.table.numpy(), [49408])


compare(load("emotions_original.py"), load("emotions.py"))
'''

# The Keras model's `train_step`, under `fit`.
TRAIN_STEP = STAND_INS + '''

def run(module):
  tf.random.set_seed(3)
  sd = StableDiffusion()
  model = module.StableDiffusionFineTuner(sd, Scheduler())
  model.compile(optimizer=keras.optimizers.Adam(0.1),
                loss=keras.losses.MeanSquaredError(reduction="none"))
  images, tokens = zip(*batches(np.random.RandomState(0), [49408, 49409]))
  before = sd.text_encoder.table.numpy()
  data = tf.data.Dataset.from_tensor_slices(
      (np.concatenate(images), np.concatenate(tokens))).batch(2)
  model.fit(data, epochs=1, verbose=0)
  return held(before, sd.text_encoder.table.numpy(), [49408, 49409])


compare(load("concepts_original.py"), load("concepts.py"))
'''


@pytest.mark.parametrize("source, name, line, spec, script", [
    ("finetuning_four_emotions.py.txt", "emotions", 510,
     "tfpartial.train_only(trainable_weights[0], 49408)", FUNCTION),
    ("finetuning_two_concepts.py.txt", "concepts", 374,
     "tfpartial.train_only(trainable_weights[0], [49408, 49409])",
     TRAIN_STEP),
], ids=["tf-function-step", "keras-train-step"])
def test_the_textual_inversion_ports_apply_and_hold_the_other_rows(
    tmp_path, source, name, line, spec, script):
  for copy in (f"{name}.py", f"{name}_original.py"):
    shutil.copy(HERE / "scan_real" / source, tmp_path / copy)
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, f"{name}.py", by_hand=[f"{name}.py:{line}"]))
  ported = (tmp_path / f"{name}.py").read_text()
  assert "tf.where(condition" not in ported, ported
  assert f"spec = {spec}\n" in ported, ported
  real_ports.run_and_compare(tmp_path, script)
