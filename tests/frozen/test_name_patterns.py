"""Name patterns in spec files: `*`, `**`, `?` over checkpoint names.

`load_spec` (bound now or at the first step) and `verify` resolve each
pattern to the names it matches; overlapping entries combine as `|`;
`to_json` writes concrete names; a pattern that matches nothing is an
error naming it and the nearest names.
"""

import json
import sys

import numpy as np
import pytest
import tensorflow as tf

import helpers
import processes
import tfpartial
from tfpartial._frozen import _patterns


@pytest.mark.parametrize("pattern, name, matches", [
    ("layer_*/kernel", "layer_3/kernel", True),
    ("layer_*/kernel", "layer_3/attention/kernel", False),
    ("layer_?/kernel", "layer_3/kernel", True),
    ("layer_?/kernel", "layer_12/kernel", False),
    ("**/bias", "bias", True),
    ("**/bias", "a/b/c/bias", True),
    ("**/bias", "a/b/bias_1", False),
    ("encoder/**/kernel", "encoder/kernel", True),
    ("encoder/**/kernel", "encoder/l/attn/kernel", True),
    ("enc**", "encoder/l/kernel", True),
    ("a.b/*", "a.b/c", True),
    ("a.b/*", "axb/c", False),
    ("w[0]/*", "w[0]/k", True),
    ("*", "a/b", False),
])
def test_a_pattern_matches_what_it_says(pattern, name, matches):
  assert bool(_patterns.compiled(pattern).fullmatch(name)) is matches


def _encoder(layers=3):
  """TF1-style names: encoder/layer_N/attention/{query,key}/kernel, bias."""
  variables = {}
  for layer in range(layers):
    for part in ("query", "key"):
      for leaf, shape in (("kernel", (4, 6)), ("bias", (6,))):
        name = f"encoder/layer_{layer}/attention/{part}/{leaf}"
        variables[name] = tf.Variable(tf.ones(shape), name=name)
  variables["head/kernel"] = tf.Variable(tf.ones((6, 2)), name="head/kernel")
  return variables


def test_a_pattern_names_every_variable_it_matches_and_writes_them_out():
  variables = _encoder()
  spec = tfpartial.load_spec(json.dumps({
      "encoder/layer_*/attention/*/kernel": {"freeze": ":, :2"},
      "**/bias": {"freeze": "..."},
  }), list(variables.values()))
  kernels = [v for n, v in variables.items()
             if n.startswith("encoder") and n.endswith("kernel")]
  for kernel in kernels:
    expected = np.zeros((4, 6), bool)
    expected[:, :2] = True
    assert spec.frozen_mask(kernel).tolist() == expected.tolist()
  assert not spec.frozen_mask(variables["head/kernel"]).any()
  assert len(spec) == 12
  written = json.loads(spec.to_json())
  assert set(written) == {n for n in variables if n != "head/kernel"}
  assert not any(_patterns.is_pattern(key) for key in written)


def test_overlapping_entries_combine_as_union():
  variables = _encoder(layers=1)
  name = "encoder/layer_0/attention/query/kernel"
  spec = tfpartial.load_spec(json.dumps({
      "encoder/**/kernel": {"freeze": "0"},
      name: {"freeze": ":, -1"},
      "encoder/layer_0/attention/quer?/kernel": {"train_only": ":3"},
  }), list(variables.values()))
  kernel = variables[name]
  expected = (tfpartial.freeze(kernel, 0) | tfpartial.freeze(kernel, np.s_[:, -1])
              | tfpartial.train_only(kernel, np.s_[:3]))
  assert spec.frozen_mask(kernel).tolist() == expected.frozen_mask(
      kernel).tolist()


def test_a_pattern_that_matches_nothing_names_the_nearest():
  variables = _encoder(layers=1)
  with pytest.raises(ValueError, match=(
      r"^the spec's pattern 'encoder/layer_\*/atention/\*/kernel' matches no "
      r"variable \(of 5\); the nearest names are "
      r"'encoder/layer_0/attention/key/kernel'")):
    tfpartial.load_spec(json.dumps(
        {"encoder/layer_*/atention/*/kernel": {"freeze": "0"}}),
        list(variables.values()))


def test_keras_paths_of_nested_models():
  keras = pytest.importorskip("keras")
  if not helpers.KERAS_3:
    pytest.skip("Keras 2 variables have no path (TensorFlow 2.15)")
  inner = keras.Sequential([keras.layers.Dense(3, name="a"),
                            keras.layers.Dense(3, name="b")], name="block")
  model = keras.Sequential([keras.Input((2,)), inner,
                            keras.layers.Dense(1, name="out")], name="net")
  spec = tfpartial.load_spec('{"net/block/*/kernel": {"freeze": "0"}}',
                             model.variables)
  assert [v.path for v in spec.variables] == ["net/block/a/kernel",
                                              "net/block/b/kernel"]
  assert spec.frozen_mask(inner.layers[0].kernel)[0].all()


def test_a_late_spec_resolves_its_patterns_at_its_first_step():
  variables = _encoder(layers=2)
  spec = tfpartial.load_spec('{"**/query/bias": {"freeze": "..."}}')
  optimizer = spec.wrap(tf.keras.optimizers.SGD(0.5))
  pairs = [(tf.ones_like(v), v) for v in variables.values()]
  optimizer.apply_gradients(pairs)
  for name, variable in variables.items():
    held = name.endswith("query/bias")
    assert bool((variable.numpy() == 1.0).all()) == held, name


def test_binding_a_pattern_to_10000_variables_tries_each_name_once(
    monkeypatch):
  names = [f"block_{i // 100}/layer_{i % 100}/kernel" for i in range(10_000)]
  variables = {name: tf.Variable(tf.zeros([1]), name=name) for name in names}
  tried = []
  real = _patterns.compiled

  def counting(pattern):
    expression = real(pattern)

    class Counted:
      def fullmatch(self, name):
        tried.append(name)
        return expression.fullmatch(name)

    return Counted()

  monkeypatch.setattr(_patterns, "compiled", counting)
  spec = tfpartial.load_spec(json.dumps({
      "block_1?/layer_*/kernel": {"freeze": "..."},
      "block_99/**": {"freeze": "..."}}), variables)
  assert len(spec) == 1_100
  assert len(tried) == 2 * 10_000  # Each pattern tries each name once.


def test_verify_resolves_patterns_and_explains_them(tmp_path):
  variables = _encoder(layers=2)
  checkpoint = tf.train.Checkpoint(**{
      name.replace("/", "_"): variable for name, variable in
      variables.items()})
  before = checkpoint.write(str(tmp_path / "before" / "ckpt"))
  moved = variables["encoder/layer_1/attention/key/kernel"]
  moved.assign(tf.tensor_scatter_nd_update(moved, [[0, 0]], [2.0]))
  after = checkpoint.write(str(tmp_path / "after" / "ckpt"))
  spec = tmp_path / "spec.json"
  spec.write_text('{"encoder_layer_*_attention_*_kernel": {"freeze": "0"}}')
  result = processes.run(
      [sys.executable, "-m", "tfpartial", "verify", before, after,
       "--spec", str(spec), "--explain"], timeout=300)
  assert result.returncode == 1, result.stdout + result.stderr
  assert ("encoder_layer_*_attention_*_kernel -> "
          "encoder_layer_0_attention_key_kernel, "
          "encoder_layer_0_attention_query_kernel, "
          "encoder_layer_1_attention_key_kernel, "
          "encoder_layer_1_attention_query_kernel") in result.stdout
  assert ("FAILED: 1 frozen element(s) of "
          "'encoder_layer_1_attention_key_kernel' changed") in result.stdout
