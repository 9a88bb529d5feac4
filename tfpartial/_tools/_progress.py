"""Progress lines on stderr that suit where stderr goes.

On a terminal a progress line is rewritten in place (`\\r`) and cleared
when done; in a file or a pipe each line that matters is printed once, on
its own line, so logs stay readable.
"""

from __future__ import annotations

from typing import Optional, TextIO


class Progress:
  """One line of progress on `stream`.

  >>> import io
  >>> log = io.StringIO()
  >>> progress = Progress(log)
  >>> progress.show("reading 1/2: x (3,)")
  >>> progress.show("reading 2/2: y (2,)")
  >>> progress.show("round 2/9", transient=True)  # Only on a terminal.
  >>> progress.close()
  >>> print(log.getvalue(), end="")
  reading 1/2: x (3,)
  reading 2/2: y (2,)
  """

  def __init__(self, stream: Optional[TextIO]):
    self._stream = stream  # None: no stderr (`2>&-`), so nothing shown.
    isatty = getattr(stream, "isatty", None)
    try:
      self._terminal = bool(isatty and isatty())
    except ValueError:  # A closed stream.
      self._terminal = False
    self._width = 0

  @property
  def terminal(self) -> bool:
    """Whether the stream is a terminal, where lines are rewritten."""
    return self._terminal

  def show(self, text: str, transient: bool = False) -> None:
    """Shows `text`; elsewhere than a terminal, only if not `transient`."""
    if self._stream is None:
      return
    if self._terminal:
      padding = " " * max(0, self._width - len(text))
      print(f"\r{text}{padding}", end="", file=self._stream, flush=True)
      self._width = len(text)
    elif not transient:
      print(text, file=self._stream, flush=True)

  def close(self) -> None:
    """Clears the line on a terminal, so what follows starts clean."""
    if self._stream is not None and self._terminal and self._width:
      print("\r" + " " * self._width + "\r", end="", file=self._stream,
            flush=True)
      self._width = 0
