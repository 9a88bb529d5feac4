"""`tfpartial.keep_pruned` on a model pruned by tfmot's `prune_low_magnitude`,
before `strip_pruning` (its mask variables) and after (its kernels' zeros):
the same spec, and fine-tuning keeps every pruned zero bit for bit (-0.0
included), proved by `verify`.

tfmot prunes `tf_keras` models (Keras 2): on TensorFlow 2.15 `tf.keras`
itself, trained here on; on 2.16+ tfmot 0.8 with `tf_keras`, and the
pruned weights move to the same model in Keras 3 (`set_weights`), which
fine-tunes: the whole road in one process. tox installs tfmot in those
envs; elsewhere the module is skipped, saying so.
"""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

_LEGACY = os.environ.get("TF_USE_LEGACY_KERAS")
# tfmot 0.8 sets TF_USE_LEGACY_KERAS=1 when imported, which makes `tf.keras`
# tf_keras in this process (if not resolved yet) and in every child process
# the other tests start: resolve `tf.keras` first, and put the variable back.
_ = tf.keras.__name__
tfmot = pytest.importorskip(
    "tensorflow_model_optimization",
    reason="tfmot is not installed here (tox installs it for the tf215 and "
    "tf221 envs)")
if _LEGACY is None:
  os.environ.pop("TF_USE_LEGACY_KERAS", None)
if helpers.KERAS_3:
  import tf_keras as keras_2  # pylint: disable=g-import-not-at-top
else:
  keras_2 = tf.keras

SPARSITY = tfmot.sparsity.keras
_RNG = np.random.default_rng(5)
X = _RNG.normal(size=(64, 8)).astype(np.float32)
Y = _RNG.normal(size=(64, 4)).astype(np.float32)


@pytest.fixture(scope="module")
def pruned():
  """A tf_keras model pruned to 75% by tfmot, and the same stripped."""
  tf.random.set_seed(0)  # (Keras 2.15's set_random_seed warns on Python 3.11.)
  model = keras_2.Sequential([keras_2.Input((8,)),
                              keras_2.layers.Dense(16, name="hidden"),
                              keras_2.layers.Dense(4, name="out")])
  wrapped = SPARSITY.prune_low_magnitude(
      model, pruning_schedule=SPARSITY.ConstantSparsity(0.75, 0, frequency=1))
  wrapped.compile(optimizer="adam", loss="mse")
  wrapped.fit(X, Y, epochs=2, batch_size=16, verbose=0,
              callbacks=[SPARSITY.UpdatePruningStep()])
  masks = {layer.layer.name: layer.pruning_vars[0][1].numpy() == 0
           for layer in wrapped.layers}
  return wrapped, SPARSITY.strip_pruning(wrapped), masks


def _target(stripped):
  """The model that fine-tunes: Keras 3 (the weights moved), or on Keras 2
  the stripped model itself."""
  if not helpers.KERAS_3:
    return stripped, tf.keras.optimizers.Adam(0.05)
  import keras  # pylint: disable=g-import-not-at-top
  model = keras.Sequential([keras.Input((8,)),
                            keras.layers.Dense(16, name="hidden"),
                            keras.layers.Dense(4, name="out")])
  model.set_weights(stripped.get_weights())
  return model, keras.optimizers.Adam(0.05)


def test_tfmot_masks_and_zeros_give_one_spec_that_keeps_the_zeros(
    pruned, tmp_path, capsys):
  wrapped, stripped, masks = pruned
  model, optimizer = _target(stripped)
  kernels = {name: model.get_layer(name).kernel for name in masks}
  before_strip = tfpartial.keep_pruned(wrapped, model, compact=True)
  after_strip = tfpartial.keep_pruned(stripped, model, compact=True)
  assert before_strip == after_strip
  for name, kernel in kernels.items():
    assert masks[name].mean() == 0.75
    np.testing.assert_array_equal(before_strip.frozen_mask(kernel),
                                  masks[name])
  written = json.loads(before_strip.to_json(tmp_path / "pruned.json"))
  assert {json.dumps(e["freeze"]) for e in written.values()} == {
      '{"where": "zero"}'}
  assert len(written) == 2 and all(e["compact"] for e in written.values())
  start = {name: k.numpy() for name, k in kernels.items()}
  assert any(np.signbit(v[masks[n]]).any() for n, v in start.items())

  # Keras 2's own HDF5 file names variables as tf_keras does.
  suffix = ".weights.h5" if helpers.KERAS_3 else ".h5"
  model.save_weights(str(tmp_path / f"before{suffix}"))
  model.compile(optimizer=before_strip.wrap(optimizer), loss="mse")
  model.fit(X, Y, epochs=2, batch_size=16, verbose=0)
  model.save_weights(str(tmp_path / f"after{suffix}"))
  # A hidden unit whose every output weight was pruned has no gradient.
  dead = masks["out"].all(axis=1)
  for name, kernel in kernels.items():
    now, mask = kernel.numpy(), masks[name]
    helpers.assert_same_bits(now[mask], start[name][mask], name)
    moves = ~mask & ~dead[None, :] if name == "hidden" else ~mask
    assert (now[moves] != start[name][moves]).all(), name

  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  code = cli.main(["verify", str(tmp_path / f"before{suffix}"),
                   str(tmp_path / f"after{suffix}"), "--spec",
                   str(tmp_path / "pruned.json")])
  out, err = capsys.readouterr()
  assert code == 0, out + err
  assert out.count("freeze where zero") == 2


def test_a_stripped_model_with_no_zero_is_not_a_pruned_one():
  tf.random.set_seed(1)  # (Keras 2.15's set_random_seed warns on Python 3.11.)
  plain = keras_2.Sequential([keras_2.Input((3,)), keras_2.layers.Dense(2)])
  with pytest.raises(ValueError, match="holds no pruning wrapper .* and no "
                     "kernel with a zero: nothing is pruned"):
    tfpartial.keep_pruned(plain)
