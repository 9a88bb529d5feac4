"""The files a scan reads: `.py` files and notebook code cells, bounded.

Only regular files are read (never a FIFO or a device), at most
`MAX_BYTES` each; a symbolic link is followed only when it stays inside
the folder being walked, and folders named by a dot (`.git`, `.venv`) are
not entered. Nothing read here is imported or run.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import stat
import tokenize
from typing import Iterator, List, Optional, Tuple

MAX_BYTES = 4 * 2**20  # Larger files are generated, not written by hand.
MAX_CELLS = 10_000
SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages"}


@dataclasses.dataclass(frozen=True)
class Source:
  """The Python text of one file.

  Attributes:
    path: The file's path as the scan names it.
    text: The code (a notebook's code cells, one after the other).
    cells: For a notebook, (first line in `text`, cell number) per code
      cell; empty for a `.py` file.
    encoding: How the file's bytes were decoded ("utf-8-sig" when it
      starts with a byte-order mark), so a diff of it can be written in
      the same bytes.
  """

  path: str
  text: str
  cells: Tuple[Tuple[int, int], ...] = ()
  encoding: str = "utf-8"

  def locate(self, line: int) -> Tuple[int, Optional[int]]:
    """The line in its cell and the cell (None for a `.py` file).

    >>> Source("a.ipynb", "x\\ny\\nz\\n", ((1, 1), (3, 4))).locate(3)
    (1, 4)
    """
    cell = None
    start = 1
    for first, number in self.cells:
      if first <= line:
        start, cell = first, number
    return line - start + 1, cell


def walk(root: str) -> Iterator[str]:
  """The `.py` and `.ipynb` files under `root`, sorted, links kept inside.

  >>> list(walk("/no/such/folder"))
  []
  """
  top = os.path.realpath(root)
  stack = [root]
  while stack:
    folder = stack.pop()
    try:
      entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
      continue
    folders = []
    for entry in entries:
      if entry.is_symlink() and not _inside(entry.path, top):
        continue
      if entry.is_dir():
        if not entry.name.startswith(".") and (
            entry.name not in SKIPPED_FOLDERS):
          folders.append(entry.path)
      elif entry.name.endswith((".py", ".ipynb")):
        yield entry.path
    stack.extend(reversed(folders))


def _inside(path: str, top: str) -> bool:
  real = os.path.realpath(path)
  return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def read(path: str) -> Source:
  """The code of `path`, or `ValueError` saying why it cannot be read."""
  data = _read_bytes(path)
  if b"\0" in data:
    raise ValueError("a binary file")
  if path.endswith(".ipynb"):
    return _notebook(path, data)
  try:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return Source(path, data.decode(encoding), (), encoding)
  except (SyntaxError, LookupError, UnicodeDecodeError) as error:
    raise ValueError(f"not text in its encoding ({error})") from None


def _read_bytes(path: str) -> bytes:
  try:
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
  except OSError as error:
    raise ValueError(error.strerror or "cannot open it") from None
  with os.fdopen(descriptor, "rb") as file:
    if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
      raise ValueError("not a regular file")
    data = file.read(MAX_BYTES + 1)
  if len(data) > MAX_BYTES:
    raise ValueError(f"larger than {MAX_BYTES // 2**20} MiB")
  return data


def _notebook(path: str, data: bytes) -> Source:
  try:
    cells = json.loads(data.decode("utf-8"))["cells"]
  except (ValueError, KeyError, TypeError, RecursionError):
    raise ValueError("not a notebook (JSON with cells)") from None
  if not isinstance(cells, list) or len(cells) > MAX_CELLS:
    raise ValueError("not a notebook (JSON with cells)")
  lines: List[str] = []
  starts = []
  for number, cell in enumerate(cells, 1):
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
      continue
    code = cell.get("source", "")
    code = "".join(code) if isinstance(code, list) else code
    if not isinstance(code, str):
      continue
    starts.append((len(lines) + 1, number))
    lines.extend(_without_magics(code).split("\n"))
  return Source(path, "\n".join(lines) + "\n", tuple(starts))


def _without_magics(code: str) -> str:
  """IPython's `%magic`, `!shell` and `?help` lines as blank lines.

  >>> _without_magics("%matplotlib inline\\nx = 1\\n!ls")
  '\\nx = 1\\n'
  """
  return "\n".join("" if line.lstrip().startswith(("%", "!", "?")) else line
                   for line in code.split("\n"))
