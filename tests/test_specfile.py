"""Spec files: round trips, hand-written specs, clear errors, a fuzzed parser."""

import json

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

import tfpartial
from tfpartial import _parse, _specfile
from test_spec import _reads  # The element-id oracle.

INDEX_FORMS = [
    0, -1, np.s_[0, 1], np.s_[:, 1:3], np.s_[..., 0], Ellipsis, [0, 2],
    ([0, 1], [3, -1]), np.array([True, False, True]), np.eye(3, 4, dtype=bool),
    [], np.s_[::2], np.s_[1:, ::3],
]


@pytest.fixture
def x():
  return tf.Variable(np.zeros((3, 4), np.float32), name="x")


@pytest.mark.parametrize("index", INDEX_FORMS, ids=repr)
@pytest.mark.parametrize("build", [tfpartial.freeze, tfpartial.train_only],
                         ids=["freeze", "train_only"])
def test_round_trip_keeps_the_frozen_mask(x, build, index):
  spec = build(x, index)
  loaded = tfpartial.load_spec(spec.to_json(), [x])
  np.testing.assert_array_equal(loaded.frozen_mask(x), spec.frozen_mask(x))
  assert loaded == spec


def test_output_is_compact(x):
  emb = tf.Variable(np.zeros((30005, 2), np.float32), name="emb")
  bias = tf.Variable([1.0], name="bias")
  spec = (tfpartial.freeze(emb, np.s_[:30000]) | tfpartial.freeze(bias)
          | tfpartial.freeze(x, (1, 2)))
  assert json.loads(spec.to_json()) == {
      "emb": {"freeze": ":30000", "shape": [30005, 2]},
      "bias": {"freeze": "...", "shape": [1]},
      "x": {"freeze": "[1], [2]", "shape": [3, 4]},
  }


def test_hand_written_spec_loads(x):
  emb = tf.Variable(np.zeros((10, 2), np.float32), name="emb")
  spec = tfpartial.load_spec(
      '{"x": {"freeze": ":, -1"},\n "emb": {"train_only": "3:"}}', [x, emb])
  np.testing.assert_array_equal(spec.frozen_mask(x),
                                _reads((3, 4), np.s_[:, -1]))
  np.testing.assert_array_equal(spec.frozen_mask(emb),
                                ~_reads((10, 2), np.s_[3:]))
  assert [v.name for v in spec.variables] == ["x:0", "emb:0"]


def test_large_mask_goes_to_npy_beside_the_file(tmp_path):
  w = tf.Variable(np.zeros((64, 64), np.float32), name="dense/kernel")
  mask = np.random.default_rng(0).random((64, 64)) < 0.3
  spec = tfpartial.freeze(w, mask)
  path = tmp_path / "spec.json"
  text = spec.to_json(path)
  assert json.loads(text)["dense/kernel"]["freeze"] == {
      "npy": "spec.dense_kernel.npy"}
  assert (tmp_path / "spec.dense_kernel.npy").exists()
  assert json.loads(path.read_text()) == json.loads(text)
  np.testing.assert_array_equal(
      tfpartial.load_spec(path, [w]).frozen_mask(w), mask)
  np.testing.assert_array_equal(
      tfpartial.load_spec(str(path), {"dense/kernel": w}).frozen_mask(w), mask)
  # Without a path there is nowhere to put a file: it is written inline.
  inline = json.loads(spec.to_json())["dense/kernel"]
  assert isinstance(next(iter(inline.values())), str)
  assert tfpartial.load_spec(spec.to_json(), [w]) == spec


def test_variables_from_a_module(x):
  module = tf.Module()
  module.x = x
  assert tfpartial.load_spec('{"x": {"freeze": "0"}}', module) == \
      tfpartial.freeze(x, 0)


@pytest.mark.parametrize("text, message", [
    ('{"y": {"freeze": "0"}}', r"the spec names 'y', which is not among the variables given \(x\)"),
    ('{"x": {"freeze": "0", "shape": [2]}}', r"the spec gives 'x' the shape \(2,\); the variable 'x' of shape \(3, 4\)"),
    ('{"x": {"freeze": ":, a"}}', r"cannot parse index ':, a' for 'x' in the spec: expected an integer.* got 'a' at column 4"),
    ('{"x": {"freeze": "0", "train_only": "1"}}', r"'x' in the spec must have exactly one of \"freeze\" or \"train_only\""),
    ('{"x": {"freze": "0"}}', r"exactly one of .*got keys \['freze'\]"),
    ('{"x": "0"}', r"'x' in the spec must be an object like"),
    ('{"x": {"freeze": 0}}', r"an index is index text such as"),
    ('{"x": {"freeze": {"npy": "m.npy"}}}', r"names the mask file 'm.npy', which is relative to a spec file"),
    ('{"x": {"freeze": "0"', r"the spec is not valid JSON"),
    ('[1, 2]', r"cannot read spec file"),
    ('{"x": {"freeze": "0", "shape": "3x4"}}', r"\"shape\" must be a list of sizes"),
])
def test_bad_spec_is_a_value_error(x, text, message):
  with pytest.raises(ValueError, match=message):
    tfpartial.load_spec(text, [x])


def test_index_out_of_range_names_the_variable(x):
  with pytest.raises(IndexError, match=r"out of range for variable 'x' of shape \(3, 4\)"):
    tfpartial.load_spec('{"x": {"freeze": "5"}}', [x])


def test_missing_file_is_a_value_error(tmp_path, x):
  with pytest.raises(ValueError, match=r"cannot read spec file '.*nothing.json'"):
    tfpartial.load_spec(tmp_path / "nothing.json", [x])


def test_npy_that_is_not_a_mask(tmp_path, x):
  np.save(tmp_path / "m.npy", np.zeros((3, 4)))
  (tmp_path / "s.json").write_text('{"x": {"freeze": {"npy": "m.npy"}}}')
  with pytest.raises(ValueError, match=r"'m.npy' holds float64, not a boolean mask"):
    tfpartial.load_spec(tmp_path / "s.json", [x])


def test_same_checkpoint_name_twice_is_a_value_error(x):
  twin = tf.Variable(np.zeros((3, 4), np.float32), name="x")
  with pytest.raises(ValueError, match=r"share the checkpoint name 'x'"):
    (tfpartial.freeze(x, 0) | tfpartial.freeze(twin, 1)).to_json()
  with pytest.raises(ValueError, match=r"share the checkpoint name 'x'"):
    tfpartial.load_spec('{"x": {"freeze": "0"}}', [x, twin])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.data())
def test_random_masks_round_trip(rows, cols, data):
  mask = np.array(data.draw(st.lists(st.booleans(), min_size=rows * cols,
                                     max_size=rows * cols))).reshape(rows, cols)
  v = tf.Variable(np.zeros((rows, cols), np.float32), name="v")
  spec = tfpartial.freeze(v, mask)
  np.testing.assert_array_equal(
      tfpartial.load_spec(spec.to_json(), [v]).frozen_mask(v), mask)


_ALPHABET = st.sampled_from(list("0123456789-+:,[]. ") + [
    "...", "None", "True", "False", "x", "\n", "\\", '"', "1e3", "0x1"])


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=40),
                 st.lists(_ALPHABET, max_size=30).map("".join)))
def test_parser_fails_only_cleanly(text):
  try:
    _parse.parse_index(text, "'v'")
  except ValueError as error:
    assert "for 'v'" in str(error)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10)
    | st.lists(st.integers(0, 3), max_size=3).map(lambda l: ":".join(map(str, l))),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(["v", "freeze", "train_only", "shape", "npy"]),
                      children, max_size=3),
    max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_any_json_loads_or_fails_cleanly(value):
  v = tf.Variable(np.zeros((3, 4), np.float32), name="v")
  try:
    spec = tfpartial.load_spec(json.dumps(value), [v])
  except (ValueError, TypeError, IndexError) as error:
    assert str(error)
  else:
    assert isinstance(spec, tfpartial.FreezeSpec)
