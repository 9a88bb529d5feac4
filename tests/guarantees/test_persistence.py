"""Checkpoints, resuming and SavedModel: what tfpartial adds never gets in
the way, restored values are the new truth, and nothing saved is lost."""

import os
import pathlib
import sys

import keras
import numpy as np
import tensorflow as tf

import helpers
import processes
import keras_problems as kp
import tfpartial
from problems import X0, X_FROZEN

pytestmark = helpers.needs_keras_3

HERE = pathlib.Path(__file__).parent.parent


def _fit(model, optimizer, steps=2):
  model.compile(optimizer=optimizer, loss=kp.squared_sum)
  model.fit(np.repeat(kp.INPUTS, steps, 0), np.repeat(kp.TARGETS, steps, 0),
            batch_size=1, verbose=0)


def test_tf_checkpoint_written_with_tfpartial_loads_without_and_back(tmp_path):
  """Wrapped Keras optimizers keep a plain one's layout: both ways load."""
  model = kp.PartialModel()
  _fit(model, model.spec().wrap(keras.optimizers.AdamW(0.05, 0.2)))
  with_path = tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(
      str(tmp_path / "with"))
  plain = kp.PartialModel()
  _fit(plain, keras.optimizers.AdamW(0.05, 0.2), steps=1)
  tf.train.Checkpoint(model=plain, optimizer=plain.optimizer).read(
      with_path).assert_consumed()
  helpers.assert_same_bits(plain.x.numpy(), model.x.numpy(), "x")
  assert int(plain.optimizer.iterations) == 2
  without_path = tf.train.Checkpoint(model=plain, optimizer=plain.optimizer
                                     ).write(str(tmp_path / "without"))
  again = kp.PartialModel()
  _fit(again, again.spec().wrap(keras.optimizers.AdamW(0.05, 0.2)), steps=1)
  tf.train.Checkpoint(model=again, optimizer=again.optimizer).read(
      without_path).assert_consumed()
  restored = again.x.numpy()
  _fit(again, again.optimizer, steps=2)
  helpers.assert_same_bits(again.x.numpy()[X_FROZEN], restored[X_FROZEN],
                           "frozen x after resuming from a plain checkpoint")


def test_keras_weights_round_trip_and_resume(tmp_path):
  model = kp.PartialModel()
  _fit(model, model.spec().wrap(keras.optimizers.Adam(0.05)))
  path = tmp_path / "model.weights.h5"
  model.save_weights(path)
  for wrapped in (True, False):
    loaded = kp.PartialModel()
    loaded(kp.INPUTS)  # Built, as Keras asks before load_weights.
    loaded.load_weights(path)
    helpers.assert_same_bits(loaded.x.numpy(), model.x.numpy(), "loaded x")
    optimizer = keras.optimizers.Adam(0.05)
    _fit(loaded, loaded.spec().wrap(optimizer) if wrapped else optimizer)
    if wrapped:
      helpers.assert_same_bits(loaded.x.numpy()[X_FROZEN],
                               model.x.numpy()[X_FROZEN], "frozen x")


def _resume(directory, steps, kill_at=None):
  command = [sys.executable, str(HERE / "resume_child.py"), str(directory),
             str(steps)] + ([str(kill_at)] if kill_at else [])
  return processes.run(command, timeout=300,
                       env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


def test_killed_trainer_resumes_from_its_last_checkpoint(tmp_path):
  import json  # pylint: disable=g-import-not-at-top
  first = _resume(tmp_path, steps=6, kill_at=3)
  assert first.returncode == -9, first.stderr[-2000:]
  assert first.stdout.split() == ["saved", "1", "saved", "2", "saved", "3"]
  assert not (tmp_path / "frozen.json").exists()
  second = _resume(tmp_path, steps=6)
  assert second.returncode == 0, second.stderr[-2000:]
  report = json.loads((tmp_path / "frozen.json").read_text())
  assert report["restored"].endswith("ckpt-3") and report["iterations"] == 6
  initial = np.linspace(-1.0, 1.3, 12, dtype=np.float32).reshape(3, 4)[:, 0]
  assert report["start"] == initial.view(np.uint32).tolist()
  assert report["end"] == report["start"]


SERVE = """
import sys
sys.modules["tfpartial"] = None  # As if tfpartial were not installed.
import numpy as np, tensorflow as tf
loaded = tf.saved_model.load(sys.argv[1])
out = loaded.serve(tf.constant(np.ones((1, 1), np.float32)))
print(repr(np.asarray(out).tolist()))
"""


def test_saved_model_serves_without_tfpartial(tmp_path):
  model = kp.PartialModel(poison=False)
  _fit(model, model.spec().wrap(keras.optimizers.AdamW(0.05, 0.2)))
  module = tf.Module()
  module.model, module.optimizer = model, model.optimizer
  module.serve = tf.function(
      lambda inputs: model(inputs),
      input_signature=[tf.TensorSpec([None, 1], tf.float32)])
  tf.saved_model.save(module, str(tmp_path / "saved"))
  expected = model(kp.INPUTS).numpy().tolist()
  result = processes.run(
      [sys.executable, "-c", SERVE, str(tmp_path / "saved")], timeout=300,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.strip().splitlines()[-1] == repr(expected)
