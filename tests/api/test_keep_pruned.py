"""`tfpartial.keep_pruned` on a TF1 checkpoint of `tf.contrib.model_pruning`:
its masks become a spec, and the same model fine-tunes on Keras 3 keeping
every pruned zero bit for bit (-0.0 included), proved by `verify`.

TF 2.x has no contrib; its checkpoints are plain variables named as
contrib names them (`P/mask` beside `P/weights`, or `<name>/mask` beside
`<name>`, float masks, unmasked weights, a `threshold` beside), saved by a
`tf.compat.v1.train.Saver`: made here so.
"""

import json

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

V1 = tf.compat.v1
_RNG = np.random.default_rng(11)
CONV = _RNG.normal(size=(3, 3, 2, 4)).astype(np.float32)
FC = _RNG.normal(size=(16, 3)).astype(np.float32)
CONV_MASK = (np.abs(CONV) > 0.9).astype(np.float32)  # ~63% pruned.
FC_MASK = (np.abs(FC) > 0.5).astype(np.float32)


def _contrib_checkpoint(folder):
  """A TF1 Saver checkpoint as a contrib-pruned model leaves it."""
  with tf.Graph().as_default():
    for name, value in (
        ("conv1/weights", CONV), ("conv1/mask", CONV_MASK),
        ("conv1/threshold", np.float32(0.9)), ("conv1/biases",
                                               np.zeros(4, np.float32)),
        ("fc", FC), ("fc/mask", FC_MASK), ("fc/threshold", np.float32(0.5))):
      V1.Variable(value, name=name)
    V1.train.get_or_create_global_step()
    with V1.Session() as session:
      session.run(V1.global_variables_initializer())
      return V1.train.Saver().save(session, str(folder / "model.ckpt"))


def _keras_model():
  import keras  # pylint: disable=g-import-not-at-top
  keras.utils.set_random_seed(0)
  return keras.Sequential([
      keras.Input((6, 6, 2)),
      keras.layers.Conv2D(4, 3, name="conv1"),
      keras.layers.GlobalAveragePooling2D(),
      keras.layers.Dense(16, name="hidden"),
      keras.layers.Dense(3, name="fc")])


def _load_pruned(model, checkpoint):
  """What a user writes to move the pruned model: weight * mask."""
  reader = tf.train.load_checkpoint(checkpoint)
  conv, fc = model.get_layer("conv1"), model.get_layer("fc")
  conv.kernel.assign(reader.get_tensor("conv1/weights")
                     * reader.get_tensor("conv1/mask"))
  conv.bias.assign(reader.get_tensor("conv1/biases"))
  fc.kernel.assign(reader.get_tensor("fc") * reader.get_tensor("fc/mask"))
  return {"conv1/weights": conv.kernel, "fc": fc.kernel}


@helpers.needs_keras_3
@pytest.mark.parametrize("compact", [False, True])
def test_a_contrib_pruned_checkpoint_fine_tunes_on_keras_3_keeping_its_zeros(
    tmp_path, capsys, compact):
  import keras  # pylint: disable=g-import-not-at-top
  checkpoint = _contrib_checkpoint(tmp_path)
  model = _keras_model()
  names = _load_pruned(model, checkpoint)
  spec = tfpartial.keep_pruned(tmp_path, names, compact=compact)
  conv_kernel, fc_kernel = names["conv1/weights"], names["fc"]
  np.testing.assert_array_equal(spec.frozen_mask(conv_kernel), CONV_MASK == 0)
  np.testing.assert_array_equal(spec.frozen_mask(fc_kernel), FC_MASK == 0)
  written = json.loads(spec.to_json(tmp_path / "pruned.json"))
  assert written[conv_kernel.path]["freeze"] == {"where": "zero"}
  assert written[fc_kernel.path].get("compact", False) == compact
  assert not list(tmp_path.glob("*.npy"))
  start = {name: v.numpy() for name, v in names.items()}
  assert np.signbit(start["fc"][FC_MASK == 0]).any()  # Some are -0.0.

  model.save_weights(tmp_path / "before.weights.h5")
  model.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.05)), loss="mse")
  rng = np.random.default_rng(0)
  model.fit(rng.normal(size=(32, 6, 6, 2)).astype(np.float32),
            rng.normal(size=(32, 3)).astype(np.float32), epochs=2, verbose=0)
  model.save_weights(tmp_path / "after.weights.h5")
  for name, mask in (("conv1/weights", CONV_MASK), ("fc", FC_MASK)):
    now = names[name].numpy()
    helpers.assert_same_bits(now[mask == 0], start[name][mask == 0], name)
    assert (now[mask == 1] != start[name][mask == 1]).all(), name

  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  code = cli.main(["verify", str(tmp_path / "before.weights.h5"),
                   str(tmp_path / "after.weights.h5"), "--spec",
                   str(tmp_path / "pruned.json")])
  out = capsys.readouterr().out
  assert code == 0, out
  assert out.count("freeze where zero") == 2


def test_contrib_masks_bind_by_name_and_refuse_what_does_not_fit(tmp_path):
  checkpoint = _contrib_checkpoint(tmp_path)
  reader = tf.train.load_checkpoint(checkpoint)
  # The same names in TF2: bound by name, as load_spec binds.
  weights = tf.Variable(CONV * CONV_MASK, name="conv1/weights")
  fc = tf.Variable(FC * FC_MASK, name="fc")
  spec = tfpartial.keep_pruned(checkpoint, [weights, fc])
  np.testing.assert_array_equal(spec.frozen_mask(weights), CONV_MASK == 0)
  # Unmasked weights: the pruned elements are not zero there.
  unmasked = tf.Variable(reader.get_tensor("fc"), name="fc")
  with pytest.raises(ValueError, match=r"variable 'fc' of shape \(16, 3\) is "
                     r"nonzero at \d+ of the \d+ elements the pruning of 'fc' "
                     r"zeroed: load the pruned weights first"):
    tfpartial.keep_pruned(checkpoint, [weights, unmasked])
  with pytest.raises(ValueError, match=r"it lacks \['fc'\]"):
    tfpartial.keep_pruned(checkpoint, {"conv1/weights": weights})
  with pytest.raises(ValueError, match=r"the pruned weight 'fc' matches none "
                     r"of the variables given"):
    tfpartial.keep_pruned(checkpoint, [weights])
  with pytest.raises(ValueError, match="need `variables`"):
    tfpartial.keep_pruned(checkpoint)
  with pytest.raises(ValueError, match="holds no pruning mask"):
    tfpartial.keep_pruned(_plain_checkpoint(tmp_path), [weights])
  with pytest.raises(TypeError, match="`source` must be the path of a TF1"):
    tfpartial.keep_pruned(3, [weights])


def _plain_checkpoint(tmp_path):
  with tf.Graph().as_default():
    V1.Variable(FC, name="fc")
    with V1.Session() as session:
      session.run(V1.global_variables_initializer())
      return V1.train.Saver().save(session, str(tmp_path / "plain" / "ckpt"))


def test_a_kernel_with_other_zeros_is_written_as_its_mask(tmp_path):
  checkpoint = _contrib_checkpoint(tmp_path)
  fc_value = FC * FC_MASK
  kept = np.argwhere(FC_MASK == 1)[0]
  fc_value[tuple(kept)] = 0.0  # A zero the pruning kept: not a pruned one.
  fc = tf.Variable(fc_value, name="fc")
  weights = tf.Variable(CONV * CONV_MASK, name="conv1/weights")
  spec = tfpartial.keep_pruned(checkpoint, [weights, fc])
  assert not spec.frozen_mask(fc)[tuple(kept)]
  written = json.loads(spec.to_json())
  assert isinstance(written["fc"]["freeze"], str)
  assert written["conv1/weights"]["freeze"] == {"where": "zero"}
  assert tfpartial.load_spec(spec.to_json(), [weights, fc]) == spec
