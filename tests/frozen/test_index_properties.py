"""Property: every path freezes exactly what NumPy's indexing selects.

The oracle is NumPy itself: `mask = np.zeros(shape, bool); mask[index] =
True`. Generated index expressions (ints, negative ints, slices with steps,
`...`, `None`, integer arrays, boolean masks of leading axes, tuples of
these, valid or not) go through each way tfpartial selects elements: the
row set, the element mask, coordinates, and spec-file text (index text ->
`load_spec`, and `to_json` -> `load_spec`). Each must select what NumPy
selects, and raise one of TypeError, ValueError or IndexError, naming the
variable, exactly when NumPy raises, and where the index reads two ways: a
bare integer array of the full shape holding only 0s and 1s, which a 0/1
mask reads otherwise (`test_zero_one_masks.py`).
"""

import json
import warnings

import numpy as np
import tensorflow as tf
from hypothesis import example, given, settings, strategies as st

import tfpartial
from tfpartial._frozen import _index

ERRORS = (TypeError, ValueError, IndexError)
NAMED = "variable 'v' of shape"


def _numpy_selects(shape, index):
  """What `array[index]` selects, or None where NumPy refuses the index or
  a 0/1 mask would select other elements."""
  selected = _numpy_reads(shape, index)
  if (isinstance(index, np.ndarray) and index.dtype.kind in "iu"
      and index.shape == tuple(shape) and index.size
      and set(np.unique(index)) <= {0, 1} and (
          selected is None
          or not np.array_equal(selected, index.astype(bool)))):
    return None
  return selected


def _numpy_reads(shape, index):
  """What `array[index]` selects, or None where NumPy refuses the index."""
  mask = np.zeros(shape, bool)
  try:
    with warnings.catch_warnings():
      # NumPy 1.x warns where NumPy 2 raises (an out-of-bound empty index).
      warnings.simplefilter("error", DeprecationWarning)
      mask[index] = True
  except (IndexError, ValueError, TypeError, DeprecationWarning):
    return None
  return mask


def _text(index):
  """`index` as it stands inside brackets, or None where text cannot say it."""
  parts = index if isinstance(index, tuple) else (index,)
  if not parts:
    return None
  words = []
  for part in parts:
    if part is Ellipsis:
      words.append("...")
    elif part is None:
      words.append("None")
    elif isinstance(part, slice):
      bounds = ["" if b is None else str(b) for b in (part.start, part.stop)]
      words.append(":".join(bounds + ([] if part.step is None
                                      else [str(part.step)])))
    elif isinstance(part, np.ndarray):
      if part.ndim == 0 or (part.size == 0 and part.ndim > 1):
        return None  # A 0-d array is no list; "[]" is one empty axis.
      words.append(repr(part.tolist()))
    elif isinstance(part, bool):
      return None  # A bare True/False is not index text.
    else:
      words.append(str(part))
  return ", ".join(words) + ("," if isinstance(index, tuple) and
                             len(parts) == 1 else "")


def _component(draw, shape, axis):
  size = shape[axis] if axis < len(shape) else draw(st.integers(1, 3))
  bound = st.integers(-size - 2, size + 2)
  kind = draw(st.sampled_from(
      ["int", "int", "slice", "slice", "all", "ellipsis", "none", "array",
       "mask", "bool"]))
  if kind == "int":
    return draw(st.integers(-size - 1, size)), 1
  if kind == "slice":
    step = draw(st.none() | st.integers(-3, 3))
    return slice(draw(st.none() | bound), draw(st.none() | bound), step), 1
  if kind == "all":
    return slice(None), 1
  if kind == "ellipsis":
    return Ellipsis, max(len(shape) - axis - 1, 0)
  if kind == "none":
    return None, 0
  if kind == "bool":
    return draw(st.booleans()), 0
  if kind == "array":
    array_shape = draw(st.sampled_from([(0,), (1,), (2,), (3,), (2, 1),
                                        (1, 2)]))
    values = draw(st.lists(st.integers(-size - 1, size),
                           min_size=int(np.prod(array_shape)),
                           max_size=int(np.prod(array_shape))))
    return np.array(values, dtype=np.int64).reshape(array_shape), 1
  axes = draw(st.integers(1, max(len(shape) - axis, 1)))
  mask_shape = list(shape[axis:axis + axes]) or [size]
  if draw(st.integers(0, 4)) == 0:  # Sometimes a size that does not fit.
    mask_shape[-1] += 1
  values = draw(st.lists(st.booleans(), min_size=int(np.prod(mask_shape)),
                         max_size=int(np.prod(mask_shape))))
  return np.array(values, bool).reshape(mask_shape), len(mask_shape)


@st.composite
def shape_and_index(draw):
  shape = tuple(draw(st.lists(
      st.integers(1, 4) | st.just(0), min_size=0, max_size=3)))
  if draw(st.integers(0, 9)) == 0:  # A mask of the full shape.
    values = draw(st.lists(st.booleans(), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    return shape, np.array(values, bool).reshape(shape)
  parts, axis = [], 0
  for _ in range(draw(st.integers(0, len(shape) + 2))):
    part, axes = _component(draw, shape, axis)
    parts.append(part)
    axis += axes
  if len(parts) == 1 and draw(st.booleans()):
    return shape, parts[0]
  return shape, tuple(parts)


def _check(build, expected, what):
  """`build()`'s frozen mask is `expected`, or it raises where NumPy does."""
  try:
    got = build()
  except ERRORS as error:
    assert expected is None, f"{what}: NumPy selects, tfpartial raised {error!r}"
    assert NAMED in str(error) or "'v' in the spec" in str(error), error
    return
  assert expected is not None, f"{what}: NumPy refuses, tfpartial selected"
  np.testing.assert_array_equal(got, expected, err_msg=what)


@settings(max_examples=200, deadline=None)
@given(shape_and_index())
@example(((4,), np.s_[0:2, :]))  # Accepted by the row fast path once.
@example(((3, 4), np.s_[1, :, :]))
@example(((3, 4), np.s_[0, ..., ...]))
@example(((2,), np.array([0, 1])))  # A 0/1 mask reads it otherwise.
@example(((2, 2), np.array([[1, 1], [0, 0]])))  # Both read row 0.
def test_every_path_selects_what_numpy_selects(case):
  shape, index = case
  expected = _numpy_selects(shape, index)
  v = tf.Variable(np.zeros(shape, np.float32), name="v")
  described = f"variable 'v' of shape {shape}"

  _check(lambda: tfpartial.freeze(v, index).frozen_mask(v), expected,
         "freeze")
  _check(lambda: tfpartial.train_only(v, index).frozen_mask(v),
         None if expected is None else ~expected, "train_only")
  _check(lambda: _index.selection_mask(shape, index, described), expected,
         "element mask")

  try:
    rows = _index.row_set(shape, _index.check_index(index, described))
  except ERRORS:
    rows = None
  if rows is not None:  # The fast path may only take what NumPy takes.
    numpy_reads = _numpy_reads(shape, index)
    assert numpy_reads is not None, f"the row set took {index!r}"
    whole_rows = np.zeros(shape, bool)
    whole_rows[rows] = True
    np.testing.assert_array_equal(whole_rows, numpy_reads,
                                  err_msg="row set")

  if expected is not None and expected.ndim:
    coordinates = np.nonzero(expected)
    _check(lambda: tfpartial.freeze(v, coordinates).frozen_mask(v), expected,
           "coordinates")

  text = _text(index)
  if text is not None:
    spec_text = json.dumps({"v": {"freeze": text}})
    _check(lambda: tfpartial.load_spec(spec_text, [v]).frozen_mask(v),
           expected, f"index text {text!r}")

  if expected is not None:
    for build in (tfpartial.freeze, tfpartial.train_only):
      spec = build(v, index)
      loaded = tfpartial.load_spec(spec.to_json(), [v])
      np.testing.assert_array_equal(loaded.frozen_mask(v),
                                    spec.frozen_mask(v), err_msg="to_json")


def test_the_row_fast_path_refuses_what_numpy_refuses():
  """The three cases the row fast path took although NumPy refuses them."""
  vector = tf.Variable(np.zeros(4, np.float32), name="v")
  matrix = tf.Variable(np.zeros((3, 4), np.float32), name="v")
  for variable, index in ((vector, np.s_[0:2, :]), (matrix, np.s_[1, :, :]),
                          (matrix, np.s_[0, ..., ...])):
    assert _numpy_selects(variable.shape, index) is None
    for build in (tfpartial.freeze, tfpartial.train_only):
      try:
        build(variable, index)
      except IndexError as error:
        assert NAMED in str(error), error
      else:
        raise AssertionError(f"{build.__name__} took {index!r}")
