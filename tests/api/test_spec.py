"""FreezeSpec as a value: index forms, union, repr, equality, immutability."""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial


@pytest.fixture
def x():
  return tf.Variable(np.zeros((3, 4), np.float32), name="x")


@pytest.mark.parametrize("index", [
    0, -1, np.int64(2), slice(1, None), np.s_[::2], np.s_[0, 1], np.s_[-1, -2],
    np.s_[:, 1:3], np.s_[..., 0], np.s_[1, ...], Ellipsis, np.s_[None, 0],
    [0, 2], np.array([2, 2, 0]), ([0, 1], [3, -1]), (np.array([[0], [2]]), [1, 2]),
    np.array([True, False, True]), np.eye(3, 4, dtype=bool), [], np.s_[0:0],
    (), True, False,
], ids=repr)
def test_frozen_mask_is_numpys_selection(x, index):
  expected = helpers.reads((3, 4), index)
  np.testing.assert_array_equal(tfpartial.freeze(x, index).frozen_mask(x), expected)
  np.testing.assert_array_equal(tfpartial.train_only(x, index).frozen_mask(x), ~expected)


def test_none_freezes_the_whole_variable(x):
  spec = tfpartial.freeze(x)
  assert spec.frozen_mask(x).all() and spec.frozen_mask(x).shape == (3, 4)
  assert repr(spec) == "FreezeSpec(x: all frozen)"


def test_ref_variable_in_a_graph():
  with tf.Graph().as_default():
    ref = tf.compat.v1.Variable(np.zeros((2, 2), np.float32), name="r",
                                use_resource=False)
    spec = tfpartial.train_only(ref, np.eye(2, dtype=bool))
    np.testing.assert_array_equal(spec.frozen_mask(ref), ~np.eye(2, dtype=bool))
    assert repr(spec) == "FreezeSpec(r: 2/4 frozen)"


def test_union_is_per_variable_or(x):
  b = tf.Variable([1.0, 2.0], name="b")
  spec = tfpartial.freeze(x, 0) | tfpartial.freeze(b) | tfpartial.freeze(x, np.s_[:, 3])
  assert isinstance(spec.variables, tuple)
  assert [v.ref() for v in spec.variables] == [x.ref(), b.ref()]
  assert len(spec) == 2
  expected = helpers.reads((3, 4), 0) | helpers.reads((3, 4), np.s_[:, 3])
  np.testing.assert_array_equal(spec.frozen_mask(x), expected)
  assert spec.frozen_mask(b).all()
  assert x in spec and b in spec and tf.Variable(1.0) not in spec
  assert (tfpartial.freeze(x, 0) | tfpartial.freeze(x)) == tfpartial.freeze(x)
  assert tfpartial.FreezeSpec() | spec == spec == spec | tfpartial.FreezeSpec()


def test_union_that_covers_everything_is_the_whole_variable(x):
  spec = tfpartial.freeze(x, np.s_[:2]) | tfpartial.freeze(x, 2)
  assert spec == tfpartial.freeze(x)
  assert repr(spec) == "FreezeSpec(x: all frozen)"


def test_repr_reads_at_a_glance(x):
  emb = tf.Variable(np.zeros((30000 + 5, 2), np.float32), name="emb")
  spec = tfpartial.freeze(x, 0) | tfpartial.freeze(emb, np.s_[:30000])
  assert repr(spec) == "FreezeSpec(x: row 0 frozen, emb: rows 0..29999 frozen)"
  assert repr(tfpartial.FreezeSpec()) == "FreezeSpec()"


TABLE = (100, 2)
VECTOR = (5,)


DESCRIBED = [
    # Nothing frozen, whatever the form of the selection.
    ((3, 4), tfpartial.freeze, [], "nothing frozen"),
    ((3, 4), tfpartial.freeze, np.s_[0:0], "nothing frozen"),
    ((3, 4), tfpartial.freeze, np.zeros((3, 4), bool), "nothing frozen"),
    ((3, 4), tfpartial.train_only, ..., "nothing frozen"),
    (TABLE, tfpartial.train_only, np.arange(100), "nothing frozen"),
    (VECTOR, tfpartial.freeze, [], "nothing frozen"),
    # Everything frozen.
    ((3, 4), tfpartial.freeze, None, "all frozen"),
    ((3, 4), tfpartial.freeze, np.ones((3, 4), bool), "all frozen"),
    (TABLE, tfpartial.train_only, [], "all frozen"),
    # Single elements and rows.
    ((3, 4), tfpartial.freeze, (0, 1), "1/12 frozen"),
    (VECTOR, tfpartial.freeze, 4, "1/5 frozen"),
    (VECTOR, tfpartial.train_only, 4, "4/5 frozen"),
    ((3, 4), tfpartial.freeze, 0, "row 0 frozen"),
    ((3, 4), tfpartial.freeze, np.s_[-1:, :], "row 2 frozen"),
    (TABLE, tfpartial.train_only, np.s_[1:], "row 0 frozen"),
    (TABLE, tfpartial.train_only, np.s_[:-1], "row 99 frozen"),
    # Many rows.
    ((3, 4), tfpartial.freeze, [0, 2], "rows 0, 2 frozen"),
    (TABLE, tfpartial.freeze, np.s_[10:20], "rows 10..19 frozen"),
    (TABLE, tfpartial.freeze, np.arange(0, 100, 10), "10/100 rows frozen"),
    (TABLE, tfpartial.train_only, np.s_[20:], "rows 0..19 frozen"),
    (TABLE, tfpartial.train_only, np.r_[:10, 20:100], "rows 10..19 frozen"),
    (TABLE, tfpartial.train_only, [3, 50], "all but rows 3, 50 frozen"),
    (TABLE, tfpartial.train_only, [7], "all but row 7 frozen"),
    (TABLE, tfpartial.train_only, np.arange(0, 100, 10), "90/100 rows frozen"),
    # Elements.
    ((3, 4), tfpartial.freeze, np.s_[:, 1], "3/12 frozen"),
    ((3, 4), tfpartial.train_only, np.s_[:, 1], "9/12 frozen"),
    ((3, 4), tfpartial.freeze, np.s_[1:, :], "rows 1..2 frozen"),
]


@pytest.mark.parametrize(
    "shape, build, index, described", DESCRIBED,
    ids=[f"{build.__name__} {described} {n}"
         for n, (_, build, _, described) in enumerate(DESCRIBED)])
def test_describe_reads_well(shape, build, index, described):
  v = tf.Variable(np.zeros(shape, np.float32), name="v")
  spec = build(v) if index is None else build(v, index)
  assert repr(spec) == f"FreezeSpec(v: {described})"


def test_describe_says_compact():
  v = tf.Variable(np.zeros(TABLE, np.float32), name="v")
  for index, described in ((np.s_[90:], "rows 0..89 frozen, compact"),
                           ([3, 50], "all but rows 3, 50 frozen, compact"),
                           (np.arange(0, 100, 10),
                            "90/100 rows frozen, compact")):
    spec = tfpartial.train_only(v, index, compact=True)
    assert repr(spec) == f"FreezeSpec(v: {described})"


def test_spec_is_immutable(x):
  spec = tfpartial.freeze(x, 0)
  with pytest.raises(AttributeError, match="immutable"):
    spec._entries = {}
  with pytest.raises(AttributeError, match="immutable"):
    spec.anything = 1
  mask = spec.frozen_mask(x)
  mask[:] = False
  assert spec.frozen_mask(x)[0].all(), "frozen_mask handed out its own array"
  index = np.array([0, 1])
  spec = tfpartial.freeze(x, index)
  index[:] = 2
  np.testing.assert_array_equal(spec.frozen_mask(x), helpers.reads((3, 4), [0, 1]))


def test_equality_and_hash(x):
  y = tf.Variable(np.zeros((3, 4), np.float32), name="x")  # Same name.
  assert tfpartial.freeze(x, 0) == tfpartial.freeze(x, np.s_[0, :])
  assert hash(tfpartial.freeze(x, 0)) == hash(tfpartial.freeze(x, np.s_[0, :]))
  assert tfpartial.freeze(x, 0) != tfpartial.freeze(x, 1)
  assert tfpartial.freeze(x, 0) != tfpartial.freeze(y, 0)
  assert tfpartial.freeze(x, 0) != "FreezeSpec(x: row 0 frozen)"


def test_variable_not_in_spec_has_nothing_frozen(x):
  other = tf.Variable([1.0, 2.0, 3.0], name="other")
  np.testing.assert_array_equal(tfpartial.freeze(x, 0).frozen_mask(other),
                                np.zeros(3, bool))
