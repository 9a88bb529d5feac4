"""The readable index text `to_json` writes: lengths known before writing."""

import numpy as np
from hypothesis import given, settings, strategies as st

from tfpartial._frozen import _index_text
from tfpartial._frozen import _selection


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10**15), max_size=20), st.integers(0, 3))
def test_list_length_is_known_before_the_text_is_written(values, depth):
  values = np.array(sorted(set(values)), dtype=np.int64)
  text = _index_text._list_text(values, 10**9, depth)
  assert _index_text._list_length(values, depth) == len(text)
  assert _index_text._list_text(values, len(text) - 1, depth) is None


def test_a_large_scattered_mask_is_not_written_past_the_limit():
  mask = np.random.default_rng(0).random((1000, 1000)) < 0.5
  assert _index_text.mask_text(mask, 4096) is None
  assert _index_text.shortest(_selection.from_mask(mask), 4096) == (
      "freeze", None)
