"""Where a physical line stands, without tokenizing: inside brackets or a
string, joined to the next by a backslash, and where its comment starts.

IPython's lines and a finding's line are read one by one, where Python's
tokenizer would stop at the first magic: this follows only what decides
whether a new statement starts on the next line.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\"\"\"|'''|[\"'#()\[\]{}]|\\$")
# What ends each open string, or a backslash (which escapes the next).
_CLOSING = {quote: re.compile(r"\\|" + re.escape(quote))
            for quote in ('"""', "'''", '"', "'")}


class LineState:
  """The state after the lines fed so far: open brackets, an open string,
  or a line joined to the next (no new statement starts there).

  >>> state = LineState()
  >>> state.feed("x = f(1,  # a comment (")
  10
  >>> state.at_start(), state.feed("      2)"), state.at_start()
  (False, 8, True)
  """

  def __init__(self) -> None:
    self.depth = 0
    self.quote = ""
    self.joined = False

  def at_start(self) -> bool:
    """Whether the next line starts a statement."""
    return not (self.depth or self.quote or self.joined)

  def feed(self, line: str) -> int:
    """Moves past `line` (without its newline); returns where its comment
    starts, or its length."""
    self.joined = False
    at = self._close(line, 0) if self.quote else 0
    while at >= 0:
      token = _TOKEN.search(line, at)
      if token is None:
        break
      text = token.group()
      if text == "#":
        return token.start()
      if text == "\\":
        self.joined = True
      elif text in "([{":
        self.depth += 1
      elif text in ")]}":
        self.depth = max(0, self.depth - 1)
      else:
        self.quote = text
        at = self._close(line, token.end())
        continue
      at = token.end()
    return len(line)

  def _close(self, line: str, at: int) -> int:
    """Past the end of the open string, or -1 if it goes on after `line`
    (a triple-quoted one, or one continued by a backslash)."""
    closing = _CLOSING[self.quote]
    while True:  # From one backslash or closing quote to the next.
      found = closing.search(line, at)
      if found is None:
        break
      if found.group() == "\\":
        at = found.start() + 2  # The character it escapes is skipped.
        continue
      self.quote = ""
      return found.end()
    if len(self.quote) == 1 and not line.endswith("\\"):
      self.quote = ""  # Unterminated: the line does not parse anyway.
    return -1


def code_end(line: str) -> int:
  """Where the code of `line`, read from a statement's start, ends: at its
  comment, or its length.

  >>> code_end("x = '#' + y  # tfpartial: ignore")
  13
  """
  return LineState().feed(line)


def comment(line: str) -> str:
  """The comment of `line` ("" if none), read from a statement's start."""
  return line[code_end(line):]
