"""0/1 masks from TF1 habits: an index that reads two ways is refused.

TF1 code keeps masks as 0/1 numbers (`mask = np.zeros_like(w); mask[:, 0]
= 1`). NumPy reads an integer array as row numbers, so a (4, 3) 0/1 mask
meant to freeze column 0 would freeze rows 0 and 1. An integer array of the
variable's full shape holding only 0s and 1s is therefore refused, showing
both readings, at every entry point (`freeze`, `train_only`, compact, spec
files bound now or at the first step, `verify`); `mask.astype(bool)` says it
is the mask, `np.s_[index, ...]` that it is row numbers, and every other
integer array keeps NumPy's meaning.
"""

import json
import re

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial import cli
# Imported now, outside any test's capsys: verify's default streams are
# bound when it is imported.
import tfpartial._tools.verify._verify  # pylint: disable=unused-import

SHAPE = (4, 3)
COLUMN_0 = np.zeros(SHAPE, np.int64)
COLUMN_0[:, 0] = 1
COLUMN_0_TEXT = json.dumps(COLUMN_0.tolist())  # "[[1, 0, 0], [1, 0, 0], ..."
W = re.escape("variable 'w' of shape (4, 3)")
BOTH_READINGS = (
    r"as a 0/1 mask it selects 4 of 12 elements, at \(0, 0\), \(1, 0\), "
    r"\(2, 0\), \(3, 0\); as NumPy reads an integer array, row numbers, it "
    r"selects rows 0, 1 \(6 of 12 elements\)")
SAY_WHICH = r"`index.astype\(bool\)` for the mask, `np.s_\[index, \.\.\.\]`"


@pytest.fixture
def w():
  return tf.Variable(np.arange(12, dtype=np.float32).reshape(SHAPE), name="w")


def _numpy_selects(shape, index):
  selected = np.zeros(shape, bool)
  selected[index] = True
  return selected


BUILDS = {
    "freeze": tfpartial.freeze,
    "train_only": tfpartial.train_only,
    "compact": lambda v, i: tfpartial.train_only(v, i, compact=True),
}


@pytest.mark.parametrize("index", [
    COLUMN_0, COLUMN_0.tolist(), COLUMN_0.astype(np.uint8),
    COLUMN_0.astype(np.int32)], ids=["int64", "list", "uint8", "int32"])
@pytest.mark.parametrize("build", BUILDS.values(), ids=BUILDS.keys())
def test_a_full_shape_0_1_integer_array_is_refused_with_both_readings(
    w, build, index):
  with pytest.raises(ValueError, match=(
      r"^`index` for " + W + r" is an integer array of the variable's shape "
      r"holding only 0s and 1s, which reads two ways: " + BOTH_READINGS
      + r"\. Say which: " + SAY_WHICH + r" for the rows")):
    build(w, index)


def test_an_eager_tensor_is_refused_as_its_value_is(w):
  with pytest.raises(ValueError, match=BOTH_READINGS):
    tfpartial.freeze(w, tf.constant(COLUMN_0))


def test_a_vector_0_1_mask_is_refused_too():
  b = tf.Variable(np.zeros(5, np.float32), name="b")
  with pytest.raises(ValueError, match=re.escape(
      "as a 0/1 mask it selects 2 of 5 elements, at (0,), (2,); as NumPy "
      "reads an integer array, row numbers, it selects elements 0, 1 (2 of "
      "5 elements)")):
    tfpartial.freeze(b, np.array([1, 0, 1, 0, 0]))


def test_a_long_list_of_positions_is_cut_short():
  v = tf.Variable(np.zeros((50, 40), np.float32), name="v")
  with pytest.raises(ValueError) as error:
    tfpartial.freeze(v, np.ones((50, 40), np.int64))
  message = str(error.value)
  assert "selects 2000 of 2000 elements, at (0, 0), (0, 1), (0, 2), (0, 3), " \
         "..." in message, message
  assert "it selects row 1 (40 of 2000 elements)" in message, message
  assert len(message) < 600, message


@pytest.mark.parametrize("build", BUILDS.values(), ids=BUILDS.keys())
def test_a_float_0_1_mask_is_told_to_use_astype_bool(w, build):
  for index in (COLUMN_0.astype(np.float32), tf.constant(COLUMN_0, tf.float32),
                COLUMN_0.astype(float).tolist()):
    with pytest.raises(TypeError, match=(
        r"(?s)`index` .* for " + W + r" is an array of dtype float(32|64); index "
        r"arrays must hold integers or booleans\. A 0/1 mask is "
        r"`mask\.astype\(bool\)`, not `astype\(int\)`, which NumPy reads as "
        r"the row numbers 0 and 1\.$")):
      build(w, index)


def test_float_row_numbers_are_told_to_use_integers(w):
  with pytest.raises(TypeError, match=(
      r"array of dtype float64; index arrays must hold integers or booleans\. "
      r"Row numbers are `index\.astype\(int\)`; a mask is boolean\.$")):
    tfpartial.freeze(w, np.array([0.0, 3.0]))


def test_astype_bool_is_the_mask(w):
  column = COLUMN_0.astype(bool)
  np.testing.assert_array_equal(
      tfpartial.freeze(w, COLUMN_0.astype(bool)).frozen_mask(w), column)
  np.testing.assert_array_equal(
      tfpartial.train_only(w, COLUMN_0.astype(bool)).frozen_mask(w), ~column)
  compact = tfpartial.train_only(w, COLUMN_0.astype(bool), compact=True)
  np.testing.assert_array_equal(compact.frozen_mask(w), ~column)


def test_a_tuple_is_numpy_s_row_numbers(w):
  rows = _numpy_selects(SHAPE, np.s_[COLUMN_0, ...])
  np.testing.assert_array_equal(rows[:, 0], [True, True, False, False])
  for index in (np.s_[COLUMN_0, ...], np.s_[COLUMN_0, :], (COLUMN_0,)):
    np.testing.assert_array_equal(
        tfpartial.freeze(w, index).frozen_mask(w), rows)
    np.testing.assert_array_equal(
        tfpartial.train_only(w, index, compact=True).frozen_mask(w), ~rows)


@pytest.mark.parametrize("shape, index", [
    ((4, 3), [0, 1]),  # Not the full shape: rows 0 and 1.
    ((4, 3), [[0, 1], [1, 0]]),
    ((4, 3), [[0, 1, 2], [2, 1, 0], [0, 0, 0], [1, 1, 1]]),  # Holds a 2.
    ((4, 3), np.s_[[1, 0, 1, 0], 0]),  # An array among others in a tuple.
    ((4,), [0, 1, 3, 2]),
    ((2, 2, 2), [[0, 1], [1, 0]]),  # Of leading axes, not the full shape.
    ((4, 3), np.zeros((0,), np.int64)),
], ids=repr)
def test_every_other_integer_array_keeps_numpy_s_meaning(shape, index):
  v = tf.Variable(np.zeros(shape, np.float32), name="v")
  np.testing.assert_array_equal(tfpartial.freeze(v, index).frozen_mask(v),
                                _numpy_selects(shape, index))


def test_readings_that_agree_are_taken():
  """Rows 0 and 1 of 1s: the same elements either way."""
  v = tf.Variable(np.zeros((4, 3), np.float32), name="v")
  index = np.array([[1, 1, 1], [1, 1, 1], [0, 0, 0], [0, 0, 0]])
  np.testing.assert_array_equal(tfpartial.freeze(v, index).frozen_mask(v),
                                index.astype(bool))


# --- Spec files ------------------------------------------------------------

def test_inline_index_text_is_refused_when_it_binds(w):
  with pytest.raises(ValueError, match=BOTH_READINGS + r".*in a spec file"):
    tfpartial.load_spec(json.dumps({"w": {"freeze": COLUMN_0_TEXT}}), [w])
  with pytest.raises(ValueError, match=BOTH_READINGS):
    tfpartial.load_spec(json.dumps(
        {"w": {"train_only": COLUMN_0_TEXT, "compact": True}}), [w])


def test_inline_text_says_which_as_python_does(w):
  as_mask = COLUMN_0_TEXT.replace("1", "True").replace("0", "False")
  spec = tfpartial.load_spec(json.dumps({"w": {"freeze": as_mask}}), [w])
  np.testing.assert_array_equal(spec.frozen_mask(w), COLUMN_0.astype(bool))
  spec = tfpartial.load_spec(
      json.dumps({"w": {"freeze": COLUMN_0_TEXT + ", ..."}}), [w])
  np.testing.assert_array_equal(spec.frozen_mask(w),
                                _numpy_selects(SHAPE, np.s_[COLUMN_0, ...]))


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.float32])
def test_a_mask_file_of_numbers_is_told_to_use_astype_bool(tmp_path, w, dtype):
  np.save(tmp_path / "mask.npy", COLUMN_0.astype(dtype))
  (tmp_path / "spec.json").write_text(
      json.dumps({"w": {"freeze": {"npy": "mask.npy"}}}))
  with pytest.raises(ValueError, match=(
      rf"'mask.npy' holds {np.dtype(dtype).name} values, not a boolean mask; "
      r"save a 0/1 mask as `mask\.astype\(bool\)`")):
    tfpartial.load_spec(tmp_path / "spec.json", [w])


def test_verify_exits_2_on_an_index_that_reads_two_ways(tmp_path, w, capsys):
  checkpoint = tf.train.Checkpoint(w=w)
  before = checkpoint.write(str(tmp_path / "before" / "ckpt"))
  w.assign_add(tf.ones(SHAPE))
  after = checkpoint.write(str(tmp_path / "after" / "ckpt"))
  spec = tmp_path / "spec.json"
  spec.write_text(json.dumps({"w": {"freeze": COLUMN_0_TEXT}}))
  capsys.readouterr()
  code = cli.main(["verify", before, after, "--spec", str(spec)])
  output = capsys.readouterr()
  assert code == 2, output
  lines = output.err.strip().splitlines()
  assert len(lines) == 1 and re.search(BOTH_READINGS, lines[0]), output.err


def test_a_late_spec_refuses_at_its_first_step_and_changes_nothing(
    exact_mode):
  spec = tfpartial.load_spec(json.dumps({"w": {"freeze": COLUMN_0_TEXT}}))
  with exact_mode.runner() as runner:
    w = runner.variable(np.arange(12).reshape(SHAPE), "w")
    optimizer = spec.wrap(tf.compat.v1.train.MomentumOptimizer(1.0, 0.9))
    before = runner.value(w)
    with pytest.raises(ValueError, match=BOTH_READINGS):
      runner.step(lambda: optimizer.apply_gradients(
          [(tf.ones(SHAPE), w)]))()
    helpers.assert_same_bits(runner.value(w), before, "w")
    assert not optimizer.variables(), "the optimizer built state"
