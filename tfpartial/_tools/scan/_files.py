"""The files a scan reads: `.py` files and notebook code cells, bounded.

Only regular files are read (never a FIFO or a device), at most
`MAX_BYTES` each; a symbolic link is followed only when it stays inside
the folder being walked, after the real files and folders, so that a file
reached through a link to a folder already walked is read once, under its
own name; a link that loops is reported and skipped. Folders named by a dot
(`.git`, `.venv`) are not entered, nor a copy of TensorFlow or Keras
kept in the project (`_vendored`). A file named twice, or reached from two
paths, is read once. Nothing read here is imported or run.
"""

from __future__ import annotations

import ast
import dataclasses
import errno
import gc
import io
import os
import stat
import tokenize
from typing import Iterator, List, Optional, Sequence, Set, Tuple, Union

from tfpartial._tools.scan import _notebook
from tfpartial._tools.scan import _vendored

MAX_BYTES = 4 * 2**20  # Larger files are generated, not written by hand.
MAX_CELLS = _notebook.MAX_CELLS
SKIPPED_FOLDERS = {"__pycache__", "node_modules", "site-packages"}
SUFFIXES = (".py", ".ipynb")


@dataclasses.dataclass(frozen=True)
class Source:
  """The Python text of one file.

  Attributes:
    path: The file's path as the scan names it.
    text: The code (a notebook's code cells, one after the other; a cell
      that does not parse is left out).
    cells: For a notebook, (first line in `text`, cell number) per code
      cell kept; empty for a `.py` file.
    encoding: How the file's bytes were decoded ("utf-8-sig" when it
      starts with a byte-order mark), so a diff of it can be written in
      the same bytes.
    notes: What reading it left out, one line each (a notebook's cells
      that do not parse).
    tree: The tree of `text` when reading it parsed it (a notebook that
      parses whole), for the scan's project to take (once) instead of
      parsing it again.
  """

  path: str
  text: str
  cells: Tuple[Tuple[int, int], ...] = ()
  encoding: str = "utf-8"
  notes: Tuple[str, ...] = ()
  tree: List[ast.Module] = dataclasses.field(
      default_factory=list, compare=False, repr=False)

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

  def line_of(self, line: int, cell: Optional[int]) -> int:
    """The line of `text` that is `line` of `cell`: `locate` undone.

    >>> Source("a.ipynb", "x\\ny\\nz\\n", ((1, 1), (3, 4))).line_of(1, 4)
    3
    """
    for first, number in self.cells:
      if number == cell:
        return first + line - 1
    return line


def files_of(paths: Sequence[str]
             ) -> Tuple[List[str], List[str], List[str]]:
  """(files, missing, notes): the files to read under `paths`, each once,
  the paths that do not exist, and a line for each link skipped."""
  files: List[str] = []
  missing: List[str] = []
  notes: List[str] = []
  seen: Set[Union[Tuple[int, int], str]] = set()
  for path in paths:
    if os.path.isdir(path):
      found: Iterator[str] = walk(path, notes)
    elif os.path.lexists(path):
      found = iter([path])
    else:
      missing.append(path)
      continue
    for file in found:
      key = _identity(file)
      if key not in seen:
        seen.add(key)
        files.append(file)
  return files, missing, notes


def _identity(path: str) -> Union[Tuple[int, int], str]:
  """The file itself (device and inode), whatever names lead to it."""
  try:
    status = os.stat(path)
  except OSError:
    return os.path.normpath(os.path.abspath(path))
  return (status.st_dev, status.st_ino)


def walk(root: str, notes: Optional[List[str]] = None) -> Iterator[str]:
  """The `.py` and `.ipynb` files under `root`: the real ones, sorted, then
  those reached through links that stay inside (each folder once).

  >>> list(walk("/no/such/folder"))
  []
  """
  top = os.path.realpath(root)
  entered: Set[Tuple[int, int]] = set()
  files: Set[Tuple[int, int]] = set()  # Each (device, inode) read once.
  links: List[str] = []
  stack = [root]
  while stack or links:
    if stack:
      folder = stack.pop()
    else:
      folder = links.pop(0)
      kind = _follow(folder, entered, files, notes)
      if kind == "file":
        yield folder
      if kind != "folder":
        continue
    device, entries = _entries(folder, entered)
    folders = []
    for entry in entries:
      if entry.is_symlink():
        if _inside(entry.path, top) and _wanted(entry.name):
          links.append(entry.path)
      elif entry.is_dir(follow_symlinks=False):
        if _wanted(entry.name) and _vendored.framework_copy(
            entry.path, read_bytes):
          if notes is not None:
            notes.append(f"{entry.path}: skipped: a copy of {entry.name} "
                         "(the framework's own code)")
        elif _wanted(entry.name):
          folders.append(entry.path)
      elif entry.name.endswith(SUFFIXES):
        files.add((device, entry.inode()))
        yield entry.path
    stack.extend(reversed(folders))


def _wanted(name: str) -> bool:
  return not name.startswith(".") and name not in SKIPPED_FOLDERS


def _entries(folder: str, entered: Set[Tuple[int, int]]
             ) -> Tuple[int, List["os.DirEntry[str]"]]:
  """The device of `folder` and its entries, sorted; none if it was
  entered before."""
  try:
    status = os.stat(folder)
    if (status.st_dev, status.st_ino) in entered:
      return 0, []
    entered.add((status.st_dev, status.st_ino))
    with os.scandir(folder) as entries:
      return status.st_dev, sorted(entries, key=lambda entry: entry.name)
  except OSError:
    return 0, []


def _follow(link: str, entered: Set[Tuple[int, int]],
            files: Set[Tuple[int, int]], notes: Optional[List[str]]) -> str:
  """What a link inside the tree leads to: "folder" (one not yet entered),
  "file" (one to read, not read yet), or "" (anything else; a loop gets a
  note)."""
  try:
    status = os.stat(link)
  except OSError as error:
    if error.errno == errno.ELOOP and notes is not None:
      notes.append(f"{link}: skipped: a symbolic link loop")
    return ""
  identity = (status.st_dev, status.st_ino)
  if not stat.S_ISDIR(status.st_mode):
    if not link.endswith(SUFFIXES) or identity in files:
      return ""
    files.add(identity)
    return "file"
  if identity not in entered:
    return "folder"
  if notes is not None and _inside(os.path.dirname(link),
                                   os.path.realpath(link)):
    notes.append(f"{link}: skipped: a symbolic link loop (it leads back to "
                 "a folder that holds it)")
  return ""


def _inside(path: str, top: str) -> bool:
  real = os.path.realpath(path)
  return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def read_all(files: Sequence[str]) -> Tuple[List[Source], List[str]]:
  """The files that read, and a line for each that does not and for each
  part of one left out (a notebook's cell)."""
  sources: List[Source] = []
  messages: List[str] = []
  collecting = gc.isenabled()
  gc.disable()  # The notebooks' trees are kept: a collection finds nothing.
  try:
    for path in files:
      try:
        source = read(path)
      except ValueError as error:
        messages.append(f"{path}: skipped: {error}")
        continue
      sources.append(source)
      messages.extend(source.notes)
  finally:
    if collecting:
      gc.enable()
  return sources, messages


def read(path: str) -> Source:
  """The code of `path`, or `ValueError` saying why it cannot be read."""
  data = read_bytes(path)
  if b"\0" in data:
    raise ValueError("a binary file")
  if path.endswith(".ipynb"):
    return _read_notebook(path, data)
  try:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return Source(path, data.decode(encoding), (), encoding)
  except (SyntaxError, LookupError, UnicodeDecodeError) as error:
    raise ValueError(f"not text in its encoding ({error})") from None


def read_bytes(path: str, limit: int = MAX_BYTES) -> bytes:
  """The bytes of the regular file `path`, at most `limit`; `ValueError`
  saying why not."""
  try:
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
  except OSError as error:
    if error.errno == errno.ELOOP:
      raise ValueError("a symbolic link loop") from None
    raise ValueError(error.strerror or "cannot open it") from None
  try:
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
      raise ValueError("not a regular file")
    with os.fdopen(descriptor, "rb", closefd=False) as file:
      data = file.read(limit + 1)
  except OSError as error:
    raise ValueError(error.strerror or "cannot read it") from None
  finally:
    os.close(descriptor)
  if len(data) > limit:
    raise ValueError(f"larger than {limit // 2**20} MiB")
  return data


def _read_notebook(path: str, data: bytes) -> Source:
  text, cells, notes, tree = _notebook.read_tree(path, data)
  return Source(path, text, cells, "utf-8", notes,
                [tree] if tree is not None else [])
