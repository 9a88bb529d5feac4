"""Index text, as it stands inside NumPy's brackets: parsed without `eval`.

The grammar is the part of Python's subscript syntax that selects elements:

    index   := item ("," item)* [","]
    item    := "..." | "None" | list | slice | int
    slice   := [int] ":" [int] [":" [int]]
    list    := "[" [element ("," element)* [","]] "]"
    element := int | "True" | "False" | list

Every failure is a ValueError that quotes the text and points at the column
of the token it could not use.
"""

from __future__ import annotations

import re
from typing import Any, List, Tuple

import numpy as np

_TOKEN = re.compile(
    r"\s*(?:(?P<int>[+-]?\d+)|(?P<ellipsis>\.\.\.)|(?P<word>[A-Za-z_]\w*)"
    r"|(?P<punct>[:,\[\]]))")
_WORDS = {"None": None, "True": True, "False": False}
# Longer texts are not index expressions anyone writes by hand; a spec file
# holding a large mask uses {"npy": FILE} instead.
_MAX_LENGTH = 10_000_000
# NumPy arrays have at most 64 dimensions.
_MAX_DEPTH = 64
_INT64 = 2**63


class _Tokens:
  """The tokens of `text`, with the column each starts at."""

  def __init__(self, text: str, what: str):
    self.text, self.what = text, what
    self.items: List[Tuple[str, Any, int]] = []
    position = 0
    while position < len(text):
      match = _TOKEN.match(text, position)
      if match is None or match.end() == position:
        if text[position:].strip() == "":
          break
        column = position + len(text[position:]) - len(text[position:].lstrip())
        self.fail(f"unexpected {text[column]!r}", column)
      kind = match.lastgroup
      value = match.group(kind)
      self.items.append((kind, value, match.start(kind)))
      position = match.end()
    self.position = 0

  def peek(self, *values: str) -> bool:
    if self.position >= len(self.items):
      return False
    kind, value, _ = self.items[self.position]
    return value in values if values else True

  def take(self) -> Tuple[str, Any, int]:
    if self.position >= len(self.items):
      self.fail("unexpected end", len(self.text))
    item = self.items[self.position]
    self.position += 1
    return item

  def expect(self, value: str) -> None:
    kind, got, column = self.take()
    if got != value:
      self.fail(f"expected {value!r}, got {got!r}", column)

  def fail(self, problem: str, column: int):
    raise ValueError(
        f"cannot parse index {_show(self.text)} for {self.what}: {problem} "
        f"at column {column + 1}")


def parse_index(text: str, what: str) -> Any:
  """The index `text` spells: an int, slice, array, Ellipsis, None or tuple.

  Args:
    text: index syntax as inside brackets, e.g. `":, :10"` or `"[0, 5, 9]"`.
    what: how errors name where the text came from (`'emb' in the spec`).

  Returns:
    What NumPy would receive between the brackets.

  Raises:
    ValueError: the text is not an index; the message points at the column.

  >>> parse_index(":, 1:-1:2", "x")
  (slice(None, None, None), slice(1, -1, 2))
  >>> parse_index("[0, 5, 9]", "x")
  array([0, 5, 9])
  """
  if not isinstance(text, str):
    raise ValueError(
        f"index for {what} must be a string of index syntax; got "
        f"{type(text).__name__}")
  if len(text) > _MAX_LENGTH:
    raise ValueError(
        f"index for {what} is {len(text)} characters long; write a large "
        "mask to a .npy file and name it as {\"npy\": FILE}")
  tokens = _Tokens(text, what)
  if not tokens.items:
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


def _item(tokens: _Tokens) -> Any:
  if tokens.peek("..."):
    tokens.take()
    return Ellipsis
  if tokens.peek("["):
    return _array(tokens)
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


def _optional_int(tokens: _Tokens):
  if tokens.position < len(tokens.items):
    kind, value, _ = tokens.items[tokens.position]
    if kind == "int":
      tokens.take()
      return int(value)
  return None


def _array(tokens: _Tokens) -> np.ndarray:
  _, _, column = tokens.items[tokens.position]
  nested = _list(tokens, depth=1)
  try:
    array = np.array(nested)
  except ValueError:
    tokens.fail("the lists are not all the same length", column)
  if array.dtype == object:
    tokens.fail("the lists are not all the same length", column)
  if array.size == 0:
    return array.astype(np.intp)
  return array


def _list(tokens: _Tokens, depth: int) -> list:
  _, _, column = tokens.items[tokens.position]
  if depth > _MAX_DEPTH:
    tokens.fail(f"lists nested deeper than {_MAX_DEPTH}", column)
  tokens.expect("[")
  elements = []
  kinds = set()
  while not tokens.peek("]"):
    if tokens.peek("["):
      elements.append(_list(tokens, depth + 1))
      kinds.add("list")
    else:
      kind, value, column = tokens.take()
      if kind == "int":
        if not -_INT64 <= int(value) < _INT64:
          tokens.fail(f"{value} does not fit in 64 bits", column)
        elements.append(int(value))
        kinds.add("int")
      elif value in ("True", "False"):
        elements.append(_WORDS[value])
        kinds.add("bool")
      else:
        tokens.fail(f"expected an integer, True, False or '[' in a list, "
                    f"got {value!r}", column)
    if len(kinds) > 1:
      tokens.fail("a list mixes " + " and ".join(sorted(kinds)),
                  tokens.items[tokens.position - 1][2])
    if not tokens.peek("]"):
      tokens.expect(",")
  tokens.take()
  return elements


def _show(text: str) -> str:
  return repr(text) if len(text) <= 60 else repr(text[:57] + "...")
