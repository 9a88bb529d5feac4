"""Spec files: round trips, hand-written specs, clear errors, a fuzzed parser."""

import json
import re

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

import helpers
import tfpartial
from tfpartial._frozen import _parse

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
      "x": {"freeze": "1, 2", "shape": [3, 4]},
  }


def test_hand_written_spec_loads(x):
  emb = tf.Variable(np.zeros((10, 2), np.float32), name="emb")
  spec = tfpartial.load_spec(
      '{"x": {"freeze": ":, -1"},\n "emb": {"train_only": "3:"}}', [x, emb])
  np.testing.assert_array_equal(spec.frozen_mask(x),
                                helpers.reads((3, 4), np.s_[:, -1]))
  np.testing.assert_array_equal(spec.frozen_mask(emb),
                                ~helpers.reads((10, 2), np.s_[3:]))
  assert [v.name for v in spec.variables] == ["x:0", "emb:0"]


def test_large_mask_goes_to_npy_beside_the_file(tmp_path):
  w = tf.Variable(np.zeros((64, 64), np.float32), name="dense/kernel")
  mask = np.random.default_rng(0).random((64, 64)) < 0.3
  spec = tfpartial.freeze(w, mask)
  path = tmp_path / "spec.json"
  text = spec.to_json(path)
  file_name = json.loads(text)["dense/kernel"]["freeze"]["npy"]
  assert re.fullmatch(r"spec\.dense_kernel\.[0-9a-f]{12}\.npy", file_name)
  assert (tmp_path / file_name).exists()
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
    ('{"x": {"freeze": "0", "shape": [2]}}', r"^the spec gives 'x' the shape \(2,\), but variable 'x' has the shape \(3, 4\)\.$"),
    ('{"x": {"freeze": ":, a"}}', r"cannot parse index ':, a' for 'x' in the spec: expected an integer.* got 'a' at column 4"),
    ('{"x": {"freeze": "0", "train_only": "1"}}', r"'x' in the spec must have exactly one of \"freeze\" or \"train_only\""),
    ('{"x": {"freze": "0"}}', r"exactly one of .*got keys \['freze'\]"),
    ('{"x": "0"}', r"'x' in the spec must be an object like"),
    ('{"x": {"freeze": 0}}', r"an index is index text such as"),
    ('{"x": {"freeze": {"npy": "m.npy"}}}', r"names the mask file 'm.npy', which is relative to a spec file"),
    ('{"x": {"freeze": "0"', r"the spec is not valid JSON"),
    ('[1, 2]', r"^a spec is a JSON object keyed by variable name; got a JSON array\.$"),
    (' "x"', r"^a spec is a JSON object keyed by variable name; got a JSON string\.$"),
    ('\n  [{"x": {"freeze": "0"}}]', r"got a JSON array"),
    ('', r"^the spec is empty text"),
    ('{"x": {"train_only": "0", "compact": "yes"}}', r"\"compact\" must be true or false"),
    ('{"x": {"freeze": "0", "compact": true}}', r"\"compact\" is only for \"train_only\""),
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
  with pytest.raises(ValueError, match=r"'m.npy' holds float64 values, not a boolean mask"):
    tfpartial.load_spec(tmp_path / "s.json", [x])


def test_same_checkpoint_name_twice_is_a_value_error(x):
  twin = tf.Variable(np.zeros((3, 4), np.float32), name="x")
  with pytest.raises(ValueError, match=r"share the checkpoint name 'x'"):
    (tfpartial.freeze(x, 0) | tfpartial.freeze(twin, 1)).to_json()
  with pytest.raises(ValueError, match=r"share the checkpoint name 'x'"):
    tfpartial.load_spec('{"x": {"freeze": "0"}}', [x, twin])


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


def test_messages_end_with_one_period(x, tmp_path):
  for text in ('{"y": {"freeze": "0"}}', '{"x": {"freeze": ":, a"}}', '[1]',
               '{"x": {"freeze": 0}}', '{"x": {"freeze": "0"', "{}x",
               '{"x": {"freeze": {"npy": "m.npy"}}}', '{"x": "0"}',
               '{"x": {"freeze": "0", "shape": "3x4"}}',
               '{"x": {"freeze": "0", "shape": [2]}}'):
    with pytest.raises(ValueError) as error:
      tfpartial.load_spec(text, [x])
    message = str(error.value)
    assert message.endswith(".") and not message.endswith(".."), message
  with pytest.raises(ValueError, match=r"no such file\.$"):
    tfpartial.load_spec(tmp_path / "nothing.json", [x])


def test_a_path_that_is_json_but_not_a_file_says_so(x):
  with pytest.raises(ValueError, match=(
      r"cannot read spec file '12': no such file \(as JSON "
      r"text it is a number, and a spec is a JSON object\)\.")):
    tfpartial.load_spec("12", [x])


# --- File names of .npy masks --------------------------------------------

def _scattered(shape, seed):
  return np.random.default_rng(seed).random(shape) < 0.4


def test_npy_names_are_unique_per_variable(tmp_path):
  """`a/b` and `a_b` once shared `spec.a_b.npy`; each keeps its own mask."""
  slash = tf.Variable(np.zeros((64, 64), np.float32), name="a/b")
  underscore = tf.Variable(np.zeros((64, 64), np.float32), name="a_b")
  upper = tf.Variable(np.zeros((64, 64), np.float32), name="A_b")
  masks = [(v, _scattered((64, 64), seed))
           for seed, v in enumerate((slash, underscore, upper))]
  spec = tfpartial.FreezeSpec()
  for variable, mask in masks:
    spec = spec | tfpartial.freeze(variable, mask)
  data = json.loads(spec.to_json(tmp_path / "spec.json"))
  names = [entry["freeze"]["npy"] for entry in data.values()]
  assert len({name.lower() for name in names}) == 3, names  # Any filesystem.
  loaded = tfpartial.load_spec(tmp_path / "spec.json", [v for v, _ in masks])
  for variable, mask in masks:
    np.testing.assert_array_equal(loaded.frozen_mask(variable), mask)


def test_writing_a_spec_never_overwrites_an_earlier_mask(tmp_path):
  """A spec written earlier beside the same path still loads its masks."""
  slash = tf.Variable(np.zeros((64, 64), np.float32), name="a/b")
  underscore = tf.Variable(np.zeros((64, 64), np.float32), name="a_b")
  first, second, third = (_scattered((64, 64), seed) for seed in range(3))
  earlier = tfpartial.freeze(slash, first).to_json(tmp_path / "spec.json")
  (tmp_path / "earlier.json").write_text(earlier)
  tfpartial.freeze(underscore, second).to_json(tmp_path / "spec.json")
  tfpartial.freeze(slash, third).to_json(tmp_path / "spec.json")
  np.testing.assert_array_equal(
      tfpartial.load_spec(tmp_path / "earlier.json", [slash]).frozen_mask(slash),
      first)
  np.testing.assert_array_equal(
      tfpartial.load_spec(tmp_path / "spec.json", [slash]).frozen_mask(slash),
      third)
  # Writing the same spec again changes no file.
  before = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.npy")}
  tfpartial.freeze(slash, third).to_json(tmp_path / "spec.json")
  after = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.npy")}
  assert before == after


def test_a_mask_file_that_was_changed_is_not_overwritten(tmp_path):
  w = tf.Variable(np.zeros((64, 64), np.float32), name="w")
  spec = tfpartial.freeze(w, _scattered((64, 64), 0))
  name = json.loads(spec.to_json(tmp_path / "spec.json"))["w"]["freeze"]["npy"]
  np.save(tmp_path / name, np.zeros((64, 64), bool))
  with pytest.raises(ValueError, match=(
      rf"'{re.escape(name)}' already exists beside the spec file and holds "
      r"another mask; move it away")):
    spec.to_json(tmp_path / "spec.json")
  assert not np.load(tmp_path / name).any()


def test_to_json_without_a_path_refuses_what_load_spec_cannot_read():
  w = tf.Variable(np.zeros((2000, 2000), np.float32), name="w")
  spec = tfpartial.freeze(w, np.random.default_rng(0).random((2000, 2000)) < 0.5)
  with pytest.raises(ValueError, match=(
      r"the mask of variable 'w' of shape \(2000, 2000\) needs more than "
      r"10,000,000 characters of index text; pass `path` so that it goes to "
      r"a .npy file")):
    spec.to_json()


# --- Readable index text --------------------------------------------------

@pytest.mark.parametrize("shape, build, index, written", [
    ((3, 4), tfpartial.freeze, np.s_[:, 0], {"freeze": ":, 0"}),
    ((3, 4), tfpartial.freeze, np.s_[:, -1], {"freeze": ":, 3"}),
    ((8, 6), tfpartial.freeze, np.s_[2:5, 1:3], {"freeze": "2:5, 1:3"}),
    ((10,), tfpartial.freeze, np.s_[::2], {"freeze": "::2"}),
    ((10,), tfpartial.freeze, np.s_[1::3], {"freeze": "1::3"}),
    ((10, 3), tfpartial.freeze, np.s_[::2], {"freeze": "::2"}),
    ((12, 3), tfpartial.freeze, np.s_[1:8:3], {"freeze": "1:8:3"}),
    ((10, 3), tfpartial.freeze, np.s_[1:8:3], {"freeze": "1::3"}),
    ((3, 4), tfpartial.train_only, np.s_[:, 1:], {"freeze": ":, 0"}),
    ((3, 4), tfpartial.train_only, np.s_[:, 0], {"train_only": ":, 0"}),
    ((8, 6), tfpartial.train_only, np.s_[2:5, 1:3], {"train_only": "2:5, 1:3"}),
    ((2, 3, 4), tfpartial.freeze, np.s_[..., 0], {"freeze": "..., 0"}),
    ((2, 3, 4), tfpartial.freeze, np.s_[:, 1], {"freeze": ":, 1"}),
    ((3, 4), tfpartial.freeze, np.s_[:, [0, 2]], {"freeze": ":, [0, 2]"}),
    ((3, 6), tfpartial.freeze, np.s_[:, [0, 1, 3]], {"freeze": ":, [0, 1, 3]"}),
    ((3, 6), tfpartial.freeze, np.s_[:, [0, 2, 4]], {"freeze": ":, ::2"}),
    ((5, 4), tfpartial.freeze, np.ix_([0, 2, 3], [0, 1, 3]),
     {"freeze": "[[0], [2], [3]], [0, 1, 3]"}),
    ((3, 4), tfpartial.freeze, (1, 2), {"freeze": "1, 2"}),
    ((3, 4), tfpartial.freeze, ([0, 2], [1, 3]), {"freeze": "[0, 2], [1, 3]"}),
    ((100, 2), tfpartial.freeze, [3, 50], {"freeze": "[3, 50]"}),
    ((100, 2), tfpartial.train_only, [3, 50], {"train_only": "[3, 50]"}),
    ((100, 2), tfpartial.train_only, np.s_[::2], {"train_only": "::2"}),
    ((100, 2), tfpartial.freeze, np.s_[1::3], {"freeze": "1::3"}),
    ((100, 2), tfpartial.freeze, np.s_[:99], {"train_only": "99"}),
    ((100, 2), tfpartial.freeze, np.s_[:90], {"freeze": ":90"}),
    ((100, 2), tfpartial.train_only, [0, 5, 99], {"train_only": "[0, 5, 99]"}),
    ((100, 2), tfpartial.train_only, np.r_[:10, 20:100], {"freeze": "10:20"}),
    ((100, 2), tfpartial.freeze, np.r_[:10, 20:100], {"train_only": "10:20"}),
    ((100, 2), tfpartial.freeze, np.s_[10:20], {"freeze": "10:20"}),
], ids=lambda value: repr(value) if isinstance(value, (tuple, dict)) else None)
def test_to_json_writes_the_shortest_text(shape, build, index, written):
  v = tf.Variable(np.zeros(shape, np.float32), name="v")
  spec = build(v, index)
  entry = json.loads(spec.to_json())["v"]
  assert {k: entry[k] for k in entry if k != "shape"} == written
  assert tfpartial.load_spec(spec.to_json(), [v]) == spec


def test_a_large_block_is_short_text_and_large_scatter_goes_to_npy(tmp_path):
  w = tf.Variable(np.zeros((3000, 1000), np.float32), name="w")
  block = tfpartial.freeze(w, np.s_[1000:2000, 100:900])
  assert json.loads(block.to_json(tmp_path / "spec.json"))["w"] == {
      "freeze": "1000:2000, 100:900", "shape": [3000, 1000]}
  scattered = tfpartial.freeze(w, _scattered((3000, 1000), 0))
  entry = json.loads(scattered.to_json(tmp_path / "spec.json"))["w"]
  assert set(entry["freeze"]) == {"npy"}
  assert tfpartial.load_spec(tmp_path / "spec.json", [w]) == scattered


def _product_mask(draw, shape):
  """A mask that is a product of per-axis sets: slices, steps, lists."""
  axes = []
  for size in shape:
    kind = draw(st.sampled_from(["all", "slice", "step", "one", "list"]))
    if kind == "all":
      axes.append(np.ones(size, bool))
      continue
    chosen = np.zeros(size, bool)
    if kind == "list":
      chosen[draw(st.lists(st.integers(0, size - 1), max_size=size))] = True
    elif kind == "one":
      chosen[draw(st.integers(0, size - 1))] = True
    else:
      start = draw(st.integers(0, size - 1))
      chosen[start:draw(st.integers(start, size)):(
          1 if kind == "slice" else draw(st.integers(2, 4)))] = True
    axes.append(chosen)
  mask = np.ones(shape, bool)
  for axis, chosen in enumerate(axes):
    mask &= chosen.reshape([-1 if a == axis else 1 for a in range(len(shape))])
  return mask


@st.composite
def masks(draw):
  shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
  kind = draw(st.sampled_from(["product", "product", "random", "rows"]))
  if kind == "product":
    mask = _product_mask(draw, shape)
  elif kind == "random":
    size = int(np.prod(shape))
    mask = np.array(draw(st.lists(st.booleans(), min_size=size,
                                  max_size=size)), bool).reshape(shape)
  else:
    mask = np.zeros(shape, bool)
    mask[draw(st.lists(st.integers(0, shape[0] - 1)))] = True
  if draw(st.booleans()):  # Sometimes the complement: train_only forms.
    mask = ~mask
  return mask


@settings(max_examples=200, deadline=None)
@given(masks(), st.sampled_from(["freeze", "train_only"]))
def test_readable_text_round_trips_exactly(mask, kind):
  v = tf.Variable(np.zeros(mask.shape, np.float32), name="v")
  build = tfpartial.freeze if kind == "freeze" else tfpartial.train_only
  spec = build(v, mask)
  text = spec.to_json()
  loaded = tfpartial.load_spec(text, [v])
  frozen = spec.frozen_mask(v)
  assert np.array_equal(loaded.frozen_mask(v), frozen), text
  # Never longer than the coordinates of the frozen or trainable elements.
  written = next(iter(json.loads(text)["v"].values()))
  coordinates = min(len(", ".join(
      "[" + ", ".join(map(str, axis)) + "]" for axis in np.nonzero(m)))
                    for m in (frozen, ~frozen))
  assert len(written) <= max(coordinates, 3), (written, text)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.data())
def test_row_sets_round_trip_exactly(rows, data):
  v = tf.Variable(np.zeros((rows, 2), np.float32), name="v")
  chosen = data.draw(st.one_of(
      st.lists(st.integers(0, rows - 1)).map(np.array),
      st.builds(lambda a, b, s: np.arange(rows)[a:b:s], st.integers(0, rows),
                st.integers(0, rows), st.integers(1, 5))))
  build = data.draw(st.sampled_from([tfpartial.freeze, tfpartial.train_only]))
  compact = build is tfpartial.train_only and data.draw(st.booleans())
  spec = (build(v, chosen.astype(np.int64), compact=True) if compact
          else build(v, chosen.astype(np.int64)))
  text = spec.to_json()
  loaded = tfpartial.load_spec(text, [v])
  assert loaded == spec and repr(loaded) == repr(spec), text
