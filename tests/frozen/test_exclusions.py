"""Exclusions, entries that freeze nothing, literal names and linear matching.

An entry's `"exclude"` takes names out of what its key matches (BitFit is
one entry); a pattern entry that freezes nothing is a ValueError from
`load_spec` (bound now or at the first step) naming it and what was
probably meant; `to_json` escapes a name holding `*`, `?`, `[` or `\\` so
that it reads back as exactly that variable; matching costs steps linear in
the name, whatever the pattern; a pattern matches a partitioned table's
name, never its parts'.
"""

import json
import re

import numpy as np
import pytest
import tensorflow as tf

import tfpartial
from tfpartial._frozen import _glob
from tfpartial._frozen import _patterns


def _block():
  """A transformer block's kinds of variables, TF2 names."""
  shapes = {"embeddings/table": (10, 4), "layer_0/attention/kernel": (4, 4),
            "layer_0/attention/bias": (4,), "layer_0/norm/gamma": (4,),
            "layer_0/norm/beta": (4,), "layer_0/dense/kernel": (4, 4),
            "layer_0/dense/bias": (4,), "head/kernel": (4, 2)}
  return {name: tf.Variable(tf.ones(shape), name=name)
          for name, shape in shapes.items()}


BITFIT = '{"**": {"freeze": "...", "exclude": ["**/bias"]}}'


def test_bitfit_is_one_entry():
  variables = _block()
  spec = tfpartial.load_spec(BITFIT, variables)
  for name, variable in variables.items():
    assert spec.frozen_mask(variable).all() != name.endswith("/bias"), name
  assert set(json.loads(spec.to_json())) == {
      n for n in variables if not n.endswith("/bias")}


def test_several_exclusions_and_union_with_other_entries():
  variables = _block()
  spec = tfpartial.load_spec(json.dumps({
      "**": {"freeze": "...",
             "exclude": ["**/bias", "**/norm/*", "head/kernel"]},
      "head/kernel": {"freeze": "0"},
  }), variables)
  frozen = {n for n, v in variables.items() if spec.frozen_mask(v).all()}
  assert frozen == {"embeddings/table", "layer_0/attention/kernel",
                    "layer_0/dense/kernel"}
  assert spec.frozen_mask(variables["head/kernel"]).tolist() == [
      [True, True]] + [[False, False]] * 3


def test_an_exclusion_that_excludes_nothing_is_an_error():
  with pytest.raises(ValueError, match=(
      r"^the exclusion '\*\*/bais' of the spec's entry '\*\*' excludes none "
      r"of the 8 name\(s\) the key matches; the nearest are ")):
    tfpartial.load_spec(
        '{"**": {"freeze": "...", "exclude": ["**/bais"]}}', _block())


def test_exclusions_that_leave_nothing_are_an_error():
  with pytest.raises(ValueError, match=(
      r"^the spec's entry '\*\*/bias' freezes nothing: its exclusions exclude "
      r"all 2 name\(s\) its key matches")):
    tfpartial.load_spec(
        '{"**/bias": {"freeze": "...", "exclude": ["layer_0/**"]}}', _block())


@pytest.mark.parametrize("text, message", [
    ('{"x": {"freeze": "0", "exclude": ["x"]}}',
     "'x' in the spec: \"exclude\" is for a pattern key"),
    ('{"**": {"freeze": "0", "exclude": "**/bias"}}',
     "'**' in the spec: \"exclude\" must be a list of patterns"),
    ('{"**": {"freeze": "0", "exclude": [""]}}',
     "'**' in the spec: \"exclude\" must be a list of patterns"),
    ('{"**": {"freeze": "0", "saved": {"h5": "vars/0"}}}',
     "'**' in the spec: \"saved\" says where one variable is saved"),
    ('{"x": {"freeze": "0", "saved": {"zip": "vars/0"}}}',
     "'x' in the spec: \"saved\" must map file formats (h5, checkpoint)"),
    ('{"x": {"freeze": "0", "other": 1}}',
     'optionally "shape", "compact", "exclude", "saved"'),
])
def test_bad_options_are_errors(text, message):
  with pytest.raises(ValueError) as error:
    tfpartial.load_spec(text)
  assert message in str(error.value)


BITFIT_HINT = ('To train only the biases, write {"**": {"freeze": "...", '
               '"exclude": ["**/bias"]}}.')


def test_train_only_everything_of_a_pattern_is_an_error_saying_what_was_meant():
  variables = _block()
  for loaded in (lambda t: tfpartial.load_spec(t, variables),
                 tfpartial.load_spec):  # Bound now, or at the first step.
    with pytest.raises(ValueError) as error:
      loaded('{"**/bias": {"train_only": "..."}}')
    assert str(error.value).startswith(
        "the spec's entry '**/bias' freezes nothing: \"train_only\" freezes "
        "the elements its index does not select, and its index selects "
        "every element of each variable it matches (a spec leaves the "
        "variables it does not name to train)."), error.value
    assert str(error.value).endswith(BITFIT_HINT), error.value


def test_an_entry_that_freezes_nothing_for_these_shapes_is_an_error():
  """`train_only "0"` freezes nothing of one-row variables: found when
  bound, now or at the first step; nothing trained."""
  rows = {f"r{i}/bias": tf.Variable(tf.ones([1, 3]), name=f"r{i}/bias")
          for i in range(2)}
  text = '{"r*/bias": {"train_only": "0"}}'
  hint = ("the spec's entry 'r*/bias' freezes nothing: \"train_only\" "
          "freezes the elements its index does not select, and its index "
          "selects every element of each of the 2 variable(s) it matches.")
  with pytest.raises(ValueError, match="^" + re.escape(hint) + "$"):
    tfpartial.load_spec(text, rows)
  late = tfpartial.load_spec(text)
  optimizer = late.wrap(tf.keras.optimizers.SGD(1.0))
  with pytest.raises(ValueError, match="^" + re.escape(hint) + "$"):
    optimizer.apply_gradients([(tf.ones([1, 3]), v) for v in rows.values()])
  for variable in rows.values():
    assert (variable.numpy() == 1.0).all()
  with pytest.raises(ValueError, match=re.escape(
      "freezes nothing: its index selects no element of each variable it "
      'matches. To freeze them whole, write {"r*/bias": {"freeze": "..."}}.')):
    tfpartial.load_spec('{"r*/bias": {"freeze": "[]"}}')


def test_a_concrete_name_that_freezes_nothing_still_round_trips():
  """What `to_json` writes for `train_only(x, ...)` is not a mistake."""
  x = tf.Variable(tf.ones([2, 3]), name="x")
  spec = tfpartial.train_only(x, ..., compact=True)
  assert tfpartial.load_spec(spec.to_json(), [x]) == spec


@pytest.mark.parametrize("name", ["w*2", "layer?/k", "w[0]", "a\\b",
                                  "a\\*", "**", "tail\\"])
def test_a_name_with_pattern_characters_reads_back_as_that_variable(name):
  target = tf.Variable(tf.ones([2]), name="unused")
  others = [tf.Variable(tf.ones([2]), name=n) for n in (
      "w12", "w2", "layer1/k", "w0", "a/b", "ab", "a*", "x")]
  named = {name: target, **{v.name[:-2]: v for v in others}}
  spec = tfpartial.freeze(target, 0)
  text = json.dumps({_glob.escape(name): json.loads(
      tfpartial.load_spec(spec.to_json(), {"unused": target}).to_json())[
          "unused"]})
  loaded = tfpartial.load_spec(text, named)
  assert loaded.variables == (target,), (name, text)
  assert loaded.frozen_mask(target).tolist() == [True, False]


def test_to_json_escapes_the_name_of_a_variable():
  variable = tf.Variable(tf.ones([2]), name="w*")
  other = tf.Variable(tf.ones([2]), name="w1")
  spec = tfpartial.freeze(variable, 0)
  written = spec.to_json()
  assert '"w\\\\*": {"freeze": "0"' in written, written
  loaded = tfpartial.load_spec(written, [variable, other])
  assert loaded == spec and other not in loaded


def test_an_unescaped_backslash_before_another_character_is_literal():
  """As spec files written before escaping had it."""
  assert _glob.unescape("a\\b\\c") == "a\\b\\c"
  assert not _glob.is_pattern("a\\b")


@pytest.mark.parametrize("pattern, name, matches", [
    ("**/**/x", "x", True),
    ("**/**/x", "a/b/x", True),
    ("a**b", "a/c/b", True),
    ("a/**", "a/", True),
    ("a/**", "a", False),
    ("**/", "a/", True),
    ("**/", "a", False),
    ("*", "", True),
    ("?", "", False),
    ("w\\*", "w*", True),
    ("w\\*", "wx", False),
    ("w\\?/*", "w?/k", True),
    ("**/b?as", "x/bias", True),
    ("*/**/*", "a/b", True),
    ("*/**/*", "a", False),
])
def test_matching_edge_cases(pattern, name, matches):
  assert _glob.Glob(pattern).fullmatch(name) is matches


def test_matching_is_linear_in_the_name_whatever_the_pattern():
  """`**/` repeated 30 times against names that do not match: Python's
  `re` would take hours; each character is one step, and a new step costs
  one pass over the pattern, at most once per character."""
  pattern = "**/" * 30 + "x"
  for length in (100, 200, 400, 800):
    glob = _glob.Glob(pattern)
    name = "a/" * (length // 2)
    assert not glob.fullmatch(name)
    assert glob.steps <= length
  reference = _glob.Glob(pattern)
  assert all(not reference.fullmatch("a/" * 400) for _ in range(100))
  assert reference.steps <= 800  # Later names reuse the steps computed.
  names = [f"block_{i}/" * 20 + "kernel" for i in range(1000)]
  deep = _glob.Glob("**/" * 14 + "**/bias")
  assert not any(deep.fullmatch(n) for n in names)
  assert deep.steps <= sum(len(n) for n in names)


def test_load_spec_with_repeated_double_stars_binds():
  variables = _block()
  spec = tfpartial.load_spec(json.dumps({
      "**/" * 20 + "bias": {"freeze": "..."}}), variables)
  assert {v.name[:-2] for v in spec.variables} == {
      "layer_0/attention/bias", "layer_0/dense/bias"}


def test_a_double_star_matches_a_partitioned_table_not_its_parts():
  with tf.Graph().as_default():
    emb = tf.compat.v1.get_variable(
        "emb", [10, 4], partitioner=tf.compat.v1.fixed_size_partitioner(2))
    kernel = tf.compat.v1.get_variable("dense/kernel", [4, 2])
    parts = list(emb)
    spec = tfpartial.load_spec('{"**": {"freeze": "0"}}', parts + [kernel])
    assert repr(spec) == ("FreezeSpec(dense/kernel: row 0 frozen, "
                          "emb [2 parts]: row 0 frozen)")
    loss = tf.reduce_sum(tf.nn.embedding_lookup(parts, [0, 7])) + (
        tf.reduce_sum(kernel))
    late = tfpartial.load_spec('{"**": {"freeze": "0"}}')
    late.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.1)).minimize(loss)
    assert repr(late).startswith("FreezeSpec(binds by name")


def test_compiled_patterns_are_the_globs():
  assert _patterns.compiled("a/*").fullmatch("a/b")
  assert np.array_equal(
      [_patterns.compiled("**/bias").fullmatch(n) for n in ("bias", "a/bia")],
      [True, False])
