"""Property: any index expression freezes exactly what NumPy selects.

The oracle reads `ids[index]` from an array of element ids; tfpartial
writes through the index. Both are NumPy, by different paths; where NumPy
refuses an index, tfpartial raises one of its three clear errors.
"""

import numpy as np
import tensorflow as tf
from hypothesis import given, settings, strategies as st

import tfpartial

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


def _component(size):
  """One index component for an axis of `size` (sometimes out of range)."""
  bound = st.integers(-size - 2, size + 2)
  return st.one_of(
      bound,
      st.builds(slice, st.none() | bound, st.none() | bound,
                st.none() | st.integers(-3, 3).filter(bool)),
      st.lists(bound, min_size=0, max_size=4).map(np.array),
      st.lists(st.booleans(), min_size=size, max_size=size).map(np.array),
      st.just(None),
  )


@st.composite
def shape_and_index(draw):
  shape = draw(shapes)
  kind = draw(st.sampled_from(["tuple", "single", "full_mask", "ellipsis"]))
  if kind == "full_mask":
    return shape, draw(st.lists(st.booleans(), min_size=int(np.prod(shape)),
                                max_size=int(np.prod(shape)))
                       .map(lambda b: np.array(b, bool).reshape(shape)))
  sizes = list(shape) or [1]
  parts = [draw(_component(size)) for size in
           sizes[:draw(st.integers(0, len(sizes) + 1))]]
  if kind == "ellipsis":
    parts.insert(draw(st.integers(0, len(parts))), Ellipsis)
  if kind == "single" and parts:
    return shape, parts[0]
  return shape, tuple(parts)


@settings(max_examples=300, deadline=None)
@given(shape_and_index())
def test_frozen_mask_equals_numpy_selection(case):
  shape, index = case
  variable = tf.Variable(np.zeros(shape, np.float32), name="v")
  ids = np.arange(int(np.prod(shape))).reshape(shape)
  try:
    selected = ids[index]
  except (IndexError, ValueError, TypeError, DeprecationWarning):
    # (NumPy 1.x warns where NumPy 2 raises: an out-of-bound empty index.)
    for build in (tfpartial.freeze, tfpartial.train_only):
      try:
        build(variable, index)
      except (IndexError, ValueError, TypeError) as error:
        assert "variable 'v' of shape" in str(error), error
      else:
        raise AssertionError(f"NumPy refused {index!r}, tfpartial did not")
    return
  expected = np.isin(ids, selected)
  np.testing.assert_array_equal(
      tfpartial.freeze(variable, index).frozen_mask(variable), expected)
  np.testing.assert_array_equal(
      tfpartial.train_only(variable, index).frozen_mask(variable), ~expected)
