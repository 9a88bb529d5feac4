"""`verify` on Keras HDF5 files of the older format, which name variables.

Keras 2 (`tf_keras`, or `keras` on TensorFlow 2.15) writes
`save_weights("w.h5")` with each layer's variable names (`dense/kernel:0`),
the names `spec.to_json()` gives its variables; Keras 3 writes `path`s
there when a model is saved to `.h5`.
"""

import warnings

import numpy as np
import pytest

import helpers
import tfpartial
from tfpartial import cli

if helpers.KERAS_3:
  tf_keras = pytest.importorskip(
      "tf_keras", reason="the tf_keras package is not installed")
else:  # TensorFlow 2.15 and older: `keras` itself is Keras 2.
  import keras as tf_keras  # pylint: disable=g-import-not-at-top


def _verify(capsys, before, after, spec):
  code = cli.main(["verify", str(before), str(after), "--spec", str(spec)])
  out, err = capsys.readouterr()
  return code, out, err


def test_keras_2_h5_names_are_the_variables_names(tmp_path, capsys):
  model = tf_keras.Sequential([
      tf_keras.Input((3,)), tf_keras.layers.Dense(4),
      tf_keras.layers.BatchNormalization(), tf_keras.layers.Dense(2)])
  dense, norm = model.layers[0], model.layers[1]
  spec = (tfpartial.freeze(dense.kernel, 0) | tfpartial.freeze(norm.beta, 1)
          | tfpartial.freeze(norm.moving_mean))
  spec.to_json(tmp_path / "spec.json")
  model.save_weights(tmp_path / "before.h5")
  model.compile(optimizer=spec.wrap(tf_keras.optimizers.Adam(0.1)),
                loss="mse")
  model.fit(np.ones((4, 3)), np.zeros((4, 2)), epochs=2, verbose=0)
  model.save_weights(tmp_path / "after.h5")
  code, out, err = _verify(capsys, tmp_path / "before.h5",
                           tmp_path / "after.h5", tmp_path / "spec.json")
  assert code == 1, out + err  # fit moves the moving mean: not trainable.
  assert "FAILED: 4 frozen element(s) of 'batch_normalization/moving_mean'" \
      in out, out
  rows = {line.split()[0]: line.split() for line in out.splitlines()[3:6]}
  assert rows[dense.kernel.name[:-2]][-3] == "0", out
  assert rows["batch_normalization/beta"][-3] == "0", out
  beta = norm.beta.numpy()
  beta[1] += 1.0
  norm.beta.assign(beta)
  model.save_weights(tmp_path / "tampered.h5")
  code, out, err = _verify(capsys, tmp_path / "after.h5",
                           tmp_path / "tampered.h5", tmp_path / "spec.json")
  assert "FAILED: 1 frozen element(s) of 'batch_normalization/beta' " \
      "changed, the largest by 1" in out, out


@helpers.needs_keras_3
def test_keras_3_legacy_h5_is_named_by_paths(tmp_path, capsys):
  import keras  # pylint: disable=g-import-not-at-top
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)],
                           name="legacy")
  spec = tfpartial.freeze(model.layers[0].kernel, np.s_[:, 1])
  spec.to_json(tmp_path / "spec.json")
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Keras: "the HDF5 format is legacy".
    model.save(tmp_path / "before.h5")
    model.layers[0].kernel.assign_add(np.ones((3, 2), np.float32))
    model.save(tmp_path / "after.h5")
  code, out, err = _verify(capsys, tmp_path / "before.h5",
                           tmp_path / "after.h5", tmp_path / "spec.json")
  assert code == 1, out + err
  assert "FAILED: 3 frozen element(s) of 'legacy/dense" in out, out
