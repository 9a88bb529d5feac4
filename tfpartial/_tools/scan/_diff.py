"""The unified diff of the ports: the file's own bytes kept (its encoding,
a byte-order mark, `\\r\\n`, form feeds), paths that `git apply` and
`patch -p1` take."""

from __future__ import annotations

import difflib
import os
import shlex
from typing import Dict, List, Optional, Sequence, Tuple

from tfpartial._tools.scan import _cells
from tfpartial._tools.scan import _files
from tfpartial._tools.scan._analysis import lines_of
from tfpartial._tools.scan._finding import Edit, Finding

NO_NEWLINE = "\\ No newline at end of file\n"
# C escapes `git diff` writes in a quoted name; other control characters
# are written in octal.
ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n",
           "\v": "\\v", "\f": "\\f", "\r": "\\r", '"': '\\"',
           "\\": "\\\\"}
# Bare, each ends the name (or the line) for `git apply` or GNU `patch`.
QUOTED = frozenset("\t\n\r")
# GNU `patch` ends a bare name at one of these unless a tab follows it.
TABBED = frozenset(" \v\f")


def diff(findings: Sequence[Finding], sources: Dict[str, _files.Source]
         ) -> Tuple[bytes, List[str]]:
  """(one unified diff porting every finding that has edits, notes for
  stderr)."""
  by_path: Dict[str, List[Edit]] = {}
  for finding in findings:
    if finding.edits:
      by_path.setdefault(finding.edited or finding.path, []).extend(
          finding.edits)
  paths = [p for p in sorted(by_path) if p in sources]
  base, notes = _base(paths)
  chunks: List[bytes] = []
  for path in paths:
    source = sources[path]
    pair = _lines(source, by_path[path])
    if pair is None:
      notes.append(f"tfpartial scan: {path}: port it by hand (its cells "
                   "are not one JSON string a line)")
      continue
    before, after = pair
    name = os.path.relpath(path, base).replace(os.sep, "/")
    lines = _marked(list(difflib.unified_diff(before, after, *_header(name))))
    encoding = "utf-8" if source.encoding == "utf-8-sig" else source.encoding
    # The headers name a path: the file system's bytes for it, whatever
    # the file's own encoding (a latin-1 file under `café dir/`).
    chunks.append(os.fsencode("".join(lines[:2])))
    chunks.append("".join(lines[2:]).encode(encoding, "surrogateescape"))
  return b"".join(chunks), notes


def _lines(source: _files.Source, edits: Sequence[Edit]
           ) -> Optional[Tuple[List[str], List[str]]]:
  """The file's lines before and after `edits`: a notebook's JSON, with
  the edits made in its cells (None when they cannot be)."""
  if source.cells:
    return _cells.ported(source, edits, apply_edits)
  before = lines_of(source.text)
  after = apply_edits(before, edits)
  if before and source.encoding == "utf-8-sig":
    before[0], after[0] = "\ufeff" + before[0], "\ufeff" + after[0]
  return before, after


def _base(paths: Sequence[str]) -> Tuple[str, List[str]]:
  """The folder the diff's paths are relative to: the current one when
  every file is under it (`git apply` and `patch -p1` take the diff as
  they stand there); else the ported files' common folder, with a note
  saying how to apply it there: neither tool takes a path with `..` or an
  absolute one."""
  here = os.path.abspath(os.curdir)
  full = [os.path.abspath(p) for p in paths]
  if all(os.path.commonpath([here, p]) == here for p in full):
    return os.curdir, []
  root = os.path.dirname(os.path.commonpath(full)) if len(full) == 1 else (
      os.path.commonpath(full))
  shown = os.path.relpath(root)
  quoted = shlex.quote(shown)
  return root, [f"tfpartial scan: the diff's paths are relative to {shown} "
                "(outside this folder): apply it there, with "
                f"`patch -p1 -d {quoted} < FILE` or "
                f"`git -C {quoted} apply < FILE`"]


def header_name(name: str) -> str:
  """`name` as it is written after `---` and `+++`, so that `git apply`,
  GNU `patch` and BusyBox's `patch` read it whole.

  A name holding a tab, a newline or a carriage return (bare, each ends
  the name or the line for `git apply` and GNU `patch`) is written as
  `git -c core.quotePath=false diff` writes it: in double quotes,
  C-escaped (a quote, a backslash and every control character in it
  escaped too). Any other name is written bare, even one holding a
  quote, a backslash, DEL or another control character: both tools read
  those bare, and BusyBox reads a name up to its first tab and never
  removes quotes. A tab follows a name holding a space, a vertical tab
  or a form feed: GNU `patch` ends a bare name at one of those unless a
  tab follows it.

  >>> header_name("a/Week 2/train.py")
  'a/Week 2/train.py\\t'
  >>> print(header_name('a/say"hi".py'))
  a/say"hi".py
  >>> print(header_name("a/tab\\there.py"))
  "a/tab\\there.py"
  >>> header_name("a/train.py")
  'a/train.py'
  """
  if any(c in QUOTED for c in name):
    name = '"' + "".join(_escaped(c) for c in name) + '"'
  return name + "\t" if any(c in TABBED for c in name) else name


def _escaped(char: str) -> str:
  """`char` as a C-quoted name holds it."""
  if char in ESCAPES:
    return ESCAPES[char]
  return f"\\{ord(char):03o}" if ord(char) < 32 or ord(char) == 127 else char


def _header(name: str) -> Tuple[str, str]:
  """The `---` and `+++` names for the file at `name`."""
  return header_name(f"a/{name}"), header_name(f"b/{name}")


def _marked(lines: Sequence[str]) -> List[str]:
  """Diff lines, with the marker `patch` wants after a last line that has
  no newline."""
  out = []
  for line in lines:
    if line.endswith(("\n", "\r")):
      out.append(line)
    else:
      out.append(line + "\n" + NO_NEWLINE)
  return out


def apply_edits(lines: List[str], edits: Sequence[Edit]) -> List[str]:
  """`lines` with `edits` applied, last first so positions hold.

  >>> apply_edits(["a = g * m\\n"], [Edit(1, 4, 1, 9, "g")])
  ['a = g\\n']
  """
  text = list(lines)
  unique = sorted(set(edits), key=lambda e: (e.line, e.col, e.end_line,
                                             e.end_col), reverse=True)
  for edit in unique:
    if edit.line > len(text):
      text.append(edit.text)
      continue
    head = text[edit.line - 1]
    tail = text[edit.end_line - 1]
    start = _offset(head, edit.col)
    end = _offset(tail, edit.end_col)
    joined = head[:start] + edit.text + tail[end:]
    text[edit.line - 1:edit.end_line] = lines_of(joined)
  return text


def _offset(line: str, col: int) -> int:
  """`ast`'s columns count UTF-8 bytes; the text counts characters."""
  return len(line.encode("utf-8", "surrogateescape")[:col].decode(
      "utf-8", "ignore"))
