"""The compiled gather of a compact element step: the elements of a tensor
at their flat offsets, as a vector, bit for bit; what does not fit is
refused."""

import numpy as np
import pytest
import tensorflow as tf

import helpers


def _library():
  from tfpartial._kernels import _native  # pylint: disable=g-import-not-at-top
  return _native.library()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reads_each_element_at_its_offset(compiled_kernel, dtype):
  params = np.arange(24, dtype=dtype).reshape(2, 3, 4)
  params.reshape(-1)[[5, 23]] = [np.nan, -np.inf]
  params.reshape(-1)[7] = np.finfo(dtype).smallest_subnormal
  offsets = np.array([0, 5, 7, 11, 23], np.int32)
  got = _library().tfpartial_gather_offsets(params, offsets)
  helpers.assert_same_bits(got.numpy(), params.reshape(-1)[offsets],
                           "gathered")


def test_many_offsets_split_across_threads_keep_their_order(compiled_kernel):
  """Over `kInlineElements` the gather is shared among threads."""
  params = np.random.default_rng(0).normal(size=(300, 1000)).astype(
      np.float32)
  offsets = np.flatnonzero(
      np.random.default_rng(1).random(params.size) < 0.5).astype(np.int32)
  assert offsets.size > 1 << 16
  got = _library().tfpartial_gather_offsets(params, offsets)
  helpers.assert_same_bits(got.numpy(), params.reshape(-1)[offsets],
                           "gathered")


def test_no_offsets_give_an_empty_vector(compiled_kernel):
  got = _library().tfpartial_gather_offsets(np.ones(3, np.float32),
                                            np.zeros(0, np.int32))
  assert got.shape == (0,) and got.dtype == tf.float32


@pytest.mark.parametrize("offsets, match", [
    ([1, 1], "rising strictly"),
    ([3, 0], "rising strictly"),
    ([0, 4], r"rising strictly in \[0, 4\)"),
    ([-1], "rising strictly"),
    ([[0]], "a vector of element offsets"),
])
def test_refuses_offsets_that_do_not_fit(compiled_kernel, offsets, match):
  with pytest.raises(tf.errors.InvalidArgumentError, match=match):
    _library().tfpartial_gather_offsets(np.zeros((2, 2), np.float32),
                                        np.array(offsets, np.int32))
