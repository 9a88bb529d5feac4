"""Index text, as it stands inside NumPy's brackets: parsed without `eval`.

The grammar is the part of Python's subscript syntax that selects elements:

    index   := item ("," item)* [","]
    item    := "..." | "None" | list | slice | int
    slice   := [int] ":" [int] [":" [int]]
    list    := "[" [element ("," element)* [","]] "]"
    element := int | "True" | "False" | list

A list holds integers (an index array) or True/False (a mask), never both:
NumPy would read `[[True, False], [0, 1]]` as integers, which is never what
such text means. Text longer than `MAX_LENGTH` characters is refused (a large
mask belongs in a `.npy` file). Parsing takes time linear in the text and
memory a small multiple of it: a list of numbers or of True/False is read
whole by NumPy, not token by token.

Every failure is a ValueError that quotes the text and points at the column
of the token it could not use.
"""

from __future__ import annotations

import re
import warnings
from typing import List, NoReturn, Optional, Tuple, Union

import numpy as np

from tfpartial._frozen._types import CheckedComponent, CheckedIndex

# Longer texts are not index expressions anyone writes by hand; a spec file
# holding a large mask uses {"npy": FILE} instead.
MAX_LENGTH = 10_000_000
# NumPy arrays have at most 64 dimensions.
_MAX_DEPTH = 64
_INT64 = 2**63

_TOKEN = re.compile(
    r"\s*(?:(?P<int>[+-]?\d+)|(?P<ellipsis>\.\.\.)|(?P<word>[A-Za-z_]\w*)"
    r"|(?P<punct>[:,\[\]]))", re.ASCII)
# A list of integers, or of True/False, with nothing nested is read whole,
# by NumPy, after checks that scan the text once and never backtrack.
_INT_LIST = re.compile(r"[0-9\s,+-]*", re.ASCII)
_SIGN_WITHOUT_DIGIT = re.compile(r"[+-](?![0-9])")
_LEADING_ZERO = re.compile(r"(?<![0-9])0+[1-9]", re.ASCII)  # 01, -007.
_INT64_LIMITS = (np.iinfo(np.int64).min, np.iinfo(np.int64).max)
_MASK_CODES = np.full(256, 3, np.uint8)  # 0 False, 1 True, 2 ",", 3 other.
_MASK_CODES[[ord("0"), ord("1"), ord(",")]] = (0, 1, 2)
_SPACE_CODES = np.frombuffer(b" \t\n\r\f\v", np.uint8)
_WORDS = {"True": True, "False": False}  # In lists; None is an item.


class _Tokens:
  """The tokens of `text`, read one at a time, with the column of each."""

  def __init__(self, text: str, what: str):
    self.text, self.what = text, what
    self.position = 0  # Where the next token starts (maybe after spaces).
    self._next: Optional[Tuple[str, str, int]] = None
    self._next_end = 0

  def _scan(self) -> Optional[Tuple[str, str, int]]:
    if self._next is None and self.position < len(self.text):
      match = _TOKEN.match(self.text, self.position)
      if match is None or match.end() == self.position:
        rest = self.text[self.position:]
        if rest.strip():
          column = self.position + len(rest) - len(rest.lstrip())
          self.fail(f"unexpected {self.text[column]!r}", column)
        return None
      kind = match.lastgroup
      assert kind is not None  # Every alternative of _TOKEN is a group.
      self._next = (kind, match.group(kind), match.start(kind))
      self._next_end = match.end()
    return self._next

  def peek(self, *values: str) -> bool:
    token = self._scan()
    if token is None:
      return False
    return token[1] in values if values else True

  def peek_kind(self) -> Optional[str]:
    token = self._scan()
    return None if token is None else token[0]

  def column(self) -> int:
    token = self._scan()
    return len(self.text) if token is None else token[2]

  def take(self) -> Tuple[str, str, int]:
    token = self._scan()
    if token is None:
      self.fail("unexpected end", len(self.text))
    self._next = None
    self.position = self._next_end
    return token

  def take_flat_list(self) -> Optional[str]:
    """The text inside the next list when nothing is nested in it, taken."""
    token = self._scan()
    if token is None or token[1] != "[":
      return None
    end = self.text.find("]", token[2])
    if end < 0 or self.text.find("[", token[2] + 1, end) >= 0:
      return None
    self._next = None
    self.position = end + 1
    return self.text[token[2] + 1:end]

  def untake_flat_list(self, inner: str) -> None:
    """Puts back the list `take_flat_list` took, to read it token by token."""
    self.position -= len(inner) + 2

  def expect(self, value: str) -> None:
    _, got, column = self.take()
    if got != value:
      self.fail(f"expected {value!r}, got {got!r}", column)

  def fail(self, problem: str, column: int) -> NoReturn:
    raise ValueError(
        f"cannot parse index {_show(self.text)} for {self.what}: {problem} "
        f"at column {column + 1}.")


def parse_index(text: object, what: str) -> CheckedIndex:
  """The index `text` spells: an int, slice, array, Ellipsis, None or tuple.

  Args:
    text: index syntax as inside brackets, e.g. `":, :10"` or `"[0, 5, 9]"`;
      at most `MAX_LENGTH` characters.
    what: how errors name where the text came from (`'emb' in the spec`).

  Returns:
    What NumPy would receive between the brackets.

  Raises:
    ValueError: the text is not an index, or is too long; the message
      points at the column.

  >>> parse_index(":, 1:-1:2", "x")
  (slice(None, None, None), slice(1, -1, 2))
  >>> parse_index("[0, 5, 9]", "x")
  array([0, 5, 9])
  """
  if not isinstance(text, str):
    raise ValueError(
        f"index for {what} must be a string of index syntax; got "
        f"{type(text).__name__}.")
  if len(text) > MAX_LENGTH:
    raise ValueError(
        f"index for {what} is {len(text)} characters long, past the "
        f"{MAX_LENGTH:,} a spec reads; write a large mask to a .npy file and "
        "name it as {\"npy\": FILE}.")
  tokens = _Tokens(text, what)
  if not tokens.peek():
    tokens.fail("empty index (use '...' for every element)", 0)
  items = [_item(tokens)]
  trailing_comma = False
  while tokens.peek(","):
    tokens.take()
    trailing_comma = True
    if not tokens.peek():
      break
    items.append(_item(tokens))
    trailing_comma = False
  if tokens.peek():
    _, value, column = tokens.take()
    tokens.fail(f"unexpected {value!r}", column)
  if len(items) == 1 and not trailing_comma:
    return items[0]
  return tuple(items)


def _item(tokens: _Tokens) -> CheckedComponent:
  if tokens.peek("..."):
    tokens.take()
    return Ellipsis
  if tokens.peek("["):
    return _List(tokens).parse()
  if tokens.peek("None"):
    tokens.take()
    return None
  start = _optional_int(tokens)
  if not tokens.peek(":"):
    if start is None:
      _, value, column = tokens.take()
      tokens.fail(f"expected an integer, ':', '...', 'None' or '[', got "
                  f"{value!r}", column)
    return start
  tokens.take()
  stop = _optional_int(tokens)
  step = None
  if tokens.peek(":"):
    tokens.take()
    step = _optional_int(tokens)
  return slice(start, stop, step)


def _optional_int(tokens: _Tokens) -> Optional[int]:
  if tokens.peek_kind() == "int":
    return _int(tokens, *tokens.take()[1:])
  return None


def _int(tokens: _Tokens, value: str, column: int) -> int:
  """The integer `value` spells, refused unless it fits in 64 bits."""
  digits = value.lstrip("+-")
  if digits[0] == "0" and digits.strip("0"):  # Python reads 00, not 01.
    tokens.fail(f"{_show(value)}: leading zeros in decimal integers are not "
                "permitted (as in Python)", column)
  # Length first: int() of thousands of digits is slow, then refused.
  if len(digits) > 19 or not -_INT64 <= int(value) < _INT64:
    tokens.fail(f"{_show(value)} does not fit in 64 bits", column)
  return int(value)


class _List:
  """One list literal (nested lists included) read into a NumPy array."""

  def __init__(self, tokens: _Tokens):
    self.tokens = tokens
    self.kind: Optional[str] = None  # "integers" or "booleans", once seen.

  def parse(self) -> np.ndarray:
    array = self._list(depth=1)
    if array.size == 0 and array.dtype != bool:
      return array.astype(np.intp)  # NumPy reads `[]` as no integers.
    return array

  def _saw(self, kind: str, column: int) -> None:
    if self.kind is None:
      self.kind = kind
    elif self.kind != kind:
      self.tokens.fail("the list mixes booleans and integers (NumPy would "
                       "read the booleans as the integers 0 and 1)", column)

  def _list(self, depth: int) -> np.ndarray:
    tokens = self.tokens
    column = tokens.column()
    if depth > _MAX_DEPTH:
      tokens.fail(f"lists nested deeper than {_MAX_DEPTH}", column)
    inner = tokens.take_flat_list()
    if inner is not None:
      array = self._flat(inner, column)
      if array is not None:
        return array
      tokens.untake_flat_list(inner)  # For the message at the right column.
    return self._nested(depth, column)

  def _flat(self, inner: str, column: int) -> Optional[np.ndarray]:
    """A list of integers or of True/False read whole, or None."""
    if not inner.strip():
      return np.zeros(0, np.intp)
    values = _flat_integers(inner)
    if values is not None:
      self._saw("integers", column)
      return values
    values = _flat_booleans(inner)
    if values is not None:
      self._saw("booleans", column)
    return values

  def _nested(self, depth: int, column: int) -> np.ndarray:
    """A list that is not flat: lists of lists, or numbers read one by one."""
    tokens = self.tokens
    tokens.expect("[")
    lists: List[np.ndarray] = []
    numbers: List[Union[int, bool]] = []
    while not tokens.peek("]"):
      element_column = tokens.column()
      if tokens.peek("["):
        lists.append(self._list(depth + 1))
      else:
        numbers.append(self._number())
      if lists and numbers:
        tokens.fail("the list mixes numbers and lists", element_column)
      if not tokens.peek("]"):
        tokens.expect(",")
    tokens.take()
    if numbers:
      return np.array(numbers, dtype=bool if self.kind == "booleans"
                      else np.int64)
    if not lists:
      return np.zeros(0, np.intp)
    if any(part.shape != lists[0].shape for part in lists):
      tokens.fail("the lists are not all the same length", column)
    dtype = bool if self.kind == "booleans" else np.int64
    return np.stack([part.astype(dtype, copy=False) for part in lists])

  def _number(self) -> Union[int, bool]:
    tokens = self.tokens
    kind, value, column = tokens.take()
    if kind == "int":
      number = _int(tokens, value, column)
      self._saw("integers", column)
      return number
    if value in ("True", "False"):
      self._saw("booleans", column)
      return _WORDS[value]
    tokens.fail(f"expected an integer, True, False or '[' in a list, got "
                f"{value!r}", column)
    raise AssertionError  # fail() raises.


def _flat_integers(inner: str) -> Optional[np.ndarray]:
  """The integers of a flat list's text; None where it is anything else.

  None sends the text to the token-by-token reader, which says what is
  wrong, or reads what NumPy cannot (integers at the limits of int64).
  """
  if not _INT_LIST.fullmatch(inner):
    return None
  if ("-" in inner or "+" in inner) and _SIGN_WITHOUT_DIGIT.search(inner):
    return None
  if _LEADING_ZERO.search(inner):
    return None  # Refused, at its column, by the token-by-token reader.
  inner = inner.rstrip().rstrip(",")
  try:
    with warnings.catch_warnings():
      # NumPy 1.x warns, NumPy 2 raises, where the text does not read to
      # its end ("1 2", "1,,2").
      warnings.simplefilter("error", DeprecationWarning)
      values = np.fromstring(inner, dtype=np.int64, sep=",")
  except (ValueError, DeprecationWarning):
    return None
  if values.size != inner.count(",") + 1:
    return None
  if values.size and (values.min() == _INT64_LIMITS[0]
                      or values.max() == _INT64_LIMITS[1]):
    return None  # NumPy clamps what does not fit: read exactly, one by one.
  return values


def _flat_booleans(inner: str) -> Optional[np.ndarray]:
  """The values of a flat list of True/False; None where it is not one."""
  words = inner.count("True") + inner.count("False")
  if not words or not inner.isascii():
    return None
  digits = inner.replace("True", "1").replace("False", "0")
  codes = np.frombuffer(digits.encode("ascii"), np.uint8)
  codes = _MASK_CODES[codes[~np.isin(codes, _SPACE_CODES)]]
  if codes[-1] == 2:  # A trailing comma.
    codes = codes[:-1]
  values, commas = codes[0::2], codes[1::2]
  # As many values as words: no 0 or 1 of the text's own among them.
  if values.size != words or (values > 1).any() or (commas != 2).any():
    return None
  booleans: np.ndarray = values == 1
  return booleans


def _show(text: str) -> str:
  return repr(text) if len(text) <= 60 else repr(text[:57] + "...")
