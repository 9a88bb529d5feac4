"""Index text: parsed in linear time and bounded memory, refused past its limit."""

import time
import tracemalloc

import numpy as np
import pytest

from tfpartial._frozen import _parse


def _peak_bytes(function):
  tracemalloc.start()
  try:
    function()
    return tracemalloc.get_traced_memory()[1]
  finally:
    tracemalloc.stop()


def _int_list(count):
  return "[" + ", ".join(str(i * 7919 % 100_003) for i in range(count)) + "]"


def _bool_rows(rows, cols):
  row = "[" + ", ".join(["True", "False"] * (cols // 2)) + "]"
  return "[" + ", ".join([row] * rows) + "]"


@pytest.mark.parametrize("text", [
    _int_list(300_000),                       # ~2 MB of coordinates.
    _int_list(150_000) + ", " + _int_list(150_000),
    _bool_rows(1000, 300),                    # ~2 MB of mask.
], ids=["int list", "coordinates", "bool mask"])
def test_memory_is_a_small_multiple_of_the_text(text):
  peak = _peak_bytes(lambda: _parse.parse_index(text, "'v'"))
  assert peak < 6 * len(text), (
      f"{peak / 2**20:.1f} MiB to parse {len(text) / 2**20:.1f} MiB of text")


def test_time_grows_linearly_with_the_text():
  """Ratios in one process: 8x the text takes far less than the 64x time of
  a quadratic parser. CPU time of this process, best of five: wall time on
  a loaded CI machine once gave 24.5x for what takes ~9x."""
  small, large = _int_list(100_000), _int_list(800_000)
  small_mask, large_mask = _bool_rows(150, 200), _bool_rows(1200, 200)

  def best(text):
    times = []
    for _ in range(5):
      start = time.process_time()
      _parse.parse_index(text, "'v'")
      times.append(time.process_time() - start)
    return min(times)

  for a, b in ((small, large), (small_mask, large_mask)):
    ratio = best(b) / best(a)
    assert ratio < 32, f"8x the text took {ratio:.1f}x the time"


def test_a_large_list_parses_to_the_same_values():
  values = np.random.default_rng(0).integers(-10**15, 10**15, 100_000)
  text = "[" + ", ".join(map(str, values.tolist())) + ",]"
  np.testing.assert_array_equal(_parse.parse_index(text, "'v'"), values)
  mask = np.random.default_rng(1).random((50, 60)) < 0.5
  parsed = _parse.parse_index(repr(mask.tolist()), "'v'")
  assert parsed.dtype == bool
  np.testing.assert_array_equal(parsed, mask)


def test_text_past_the_limit_is_refused_and_says_the_limit():
  text = "0" * (_parse.MAX_LENGTH + 1)
  with pytest.raises(ValueError, match=(
      r"index for 'v' is 10000001 characters long, past the 10,000,000 a "
      r"spec reads; write a large mask to a .npy file")):
    _parse.parse_index(text, "'v'")


@pytest.mark.parametrize("text, message", [
    ("[[True, False], [0, 1]]", r"the list mixes booleans and integers"),
    ("[[0, 1], [True, False]]", r"the list mixes booleans and integers"),
    ("[[[True]], [[2]]]", r"the list mixes booleans and integers"),
    ("[True, 0]", r"the list mixes booleans and integers"),
    ("[1, [2]]", r"the list mixes numbers and lists"),
    ("[[1, 2], [3]]", r"the lists are not all the same length"),
    ("[[1, 2], []]", r"the lists are not all the same length"),
    ("[1, 2", r"unexpected end at column 6"),
    ("[1,, 2]", r"expected an integer, True, False or '\[' in a list, got ',' at column 4"),
    ("[,]", r"expected an integer, True, False or '\[' in a list, got ',' at column 2"),
    ("[99999999999999999999]", r"'99999999999999999999' does not fit in 64 bits"),
    ("[9223372036854775808]", r"'9223372036854775808' does not fit in 64 bits"),
    ("[" + "1" * 5000 + "]", r"'1111111111.*' does not fit in 64 bits at column 2"),
    ("[" * 70 + "]" * 70, r"lists nested deeper than 64"),
])
def test_bad_lists_are_refused(text, message):
  with pytest.raises(ValueError, match=r"cannot parse index .* for 'v': " + message):
    _parse.parse_index(text, "'v'")


@pytest.mark.parametrize("text, expected", [
    ("[1, 2,]", np.array([1, 2])),
    ("[ +1 ,-2 ]", np.array([1, -2])),
    ("[[1], [2]]", np.array([[1], [2]])),
    ("[[True], [False]]", np.array([[True], [False]])),
    ("[[], []]", np.zeros((2, 0), np.intp)),
    ("[]", np.zeros(0, np.intp)),
    ("[9223372036854775807, -9223372036854775808]",
     np.array([2**63 - 1, -2**63])),
])
def test_lists_parse_as_numpy_reads_them(text, expected):
  parsed = _parse.parse_index(text, "'v'")
  assert parsed.dtype == expected.dtype and parsed.shape == expected.shape
  np.testing.assert_array_equal(parsed, expected)


@pytest.mark.parametrize("text", ["9" * 20, "1" * 5000, "0:" + "9" * 30,
                                  "::-" + "9" * 30])
def test_integers_past_64_bits_are_refused(text):
  with pytest.raises(ValueError, match=r"does not fit in 64 bits"):
    _parse.parse_index(text, "'v'")


def test_messages_end_with_a_period():
  for text in ("", ":, a", "[1, 2", "0" * (_parse.MAX_LENGTH + 1)):
    with pytest.raises(ValueError) as error:
      _parse.parse_index(text, "'v'")
    assert str(error.value).endswith("."), error.value


@pytest.mark.parametrize("text", [
    "[1 2]", "[1 2, 3]", "[- 1]", "[1-2]", "[,1]", "[1,,2]", "[+-1]",
    "[True False]", "[TrueFalse]", "[Tru e]", "[True, 0]", "[0, True]",
    "[True,, False]", "[True, 1]", "[١]", "[True, Falsee]",
])
def test_malformed_flat_lists_are_refused(text):
  with pytest.raises(ValueError, match=r"cannot parse index"):
    _parse.parse_index(text, "'v'")


@pytest.mark.parametrize("text", ["01", "-01", "+007", "1:02", "[01, 2]",
                                  "[1, 00012]", "[[0, 1], [01, 1]]"])
def test_a_leading_zero_is_refused_as_python_refuses_it(text):
  with pytest.raises(ValueError, match=r"leading zeros in decimal integers "
                     r"are not permitted \(as in Python\) at column"):
    _parse.parse_index(text, "x")


@pytest.mark.parametrize("text, index", [
    ("0", 0), ("00", 0), ("-0", 0), ("10", 10), ("[0, 00, 10]", [0, 0, 10])])
def test_zero_itself_may_be_written_with_several_zeros(text, index):
  assert np.array_equal(_parse.parse_index(text, "x"), index)
