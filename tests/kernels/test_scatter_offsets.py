"""The compiled scatter of a compact element step's write-back: it writes
each value at its flat offset, in place, and refuses what does not fit."""

import numpy as np
import pytest
import tensorflow as tf

import helpers


def _library():
  from tfpartial._kernels import _native  # pylint: disable=g-import-not-at-top
  return _native.library()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_writes_each_value_at_its_offset(compiled_kernel, dtype):
  before = np.arange(12, dtype=dtype).reshape(3, 4)
  variable = tf.Variable(before)
  offsets = np.array([0, 5, 11], np.int32)
  values = np.array([-1.5, np.nan, np.inf], dtype)
  _library().tfpartial_resource_scatter_offsets(variable.handle, offsets,
                                                values)
  expected = before.copy()
  expected.reshape(-1)[offsets] = values
  helpers.assert_same_bits(variable.numpy(), expected, "after the scatter")


def test_a_read_taken_before_keeps_its_value(compiled_kernel):
  """The variable's buffer is shared with a read: the scatter copies it
  first (copy on write), so the read is not changed under its holder."""
  variable = tf.Variable(np.zeros((2, 2), np.float32))
  read = variable.read_value()
  _library().tfpartial_resource_scatter_offsets(
      variable.handle, np.array([1], np.int32), np.array([7.0], np.float32))
  assert read.numpy().sum() == 0.0 and variable.numpy()[0, 1] == 7.0


@pytest.mark.parametrize("offsets, values, match", [
    ([1, 1], [1.0, 2.0], "rising strictly"),
    ([3, 0], [1.0, 2.0], "rising strictly"),
    ([0, 4], [1.0, 2.0], r"rising strictly in \[0, 4\)"),
    ([0, 1], [1.0], "one value per offset"),
])
def test_refuses_offsets_and_values_that_do_not_fit(compiled_kernel, offsets,
                                                     values, match):
  variable = tf.Variable(np.zeros((2, 2), np.float32))
  with pytest.raises(tf.errors.InvalidArgumentError, match=match):
    _library().tfpartial_resource_scatter_offsets(
        variable.handle, np.array(offsets, np.int32),
        np.array(values, np.float32))
  assert not variable.numpy().any(), "a refused scatter wrote something"


@pytest.mark.parametrize("read_held", [False, True])
def test_refuses_values_of_another_dtype_than_the_variable(compiled_kernel,
                                                           read_held):
  """Refused, not a crash, also where a read holds the variable's buffer
  (reading it as another dtype to copy it once aborted the process)."""
  variable = tf.Variable(np.zeros(3, np.float64))
  read = variable.read_value() if read_held else None
  with pytest.raises(tf.errors.InvalidArgumentError, match="dtype"):
    _library().tfpartial_resource_scatter_offsets(
        variable.handle, np.array([0], np.int32), np.array([1.0], np.float32))
  assert not variable.numpy().any() and (read is None or not read.numpy().any())
