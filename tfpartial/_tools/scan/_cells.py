"""A notebook's ports as edits of its JSON: each edited cell's `source`
list rewritten in place, one string a line, every other byte of the file
kept; `None` when the file is not written that way (the port is then by
hand)."""

from __future__ import annotations

import difflib
import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tfpartial._tools.scan import _files
from tfpartial._tools.scan._analysis import lines_of
from tfpartial._tools.scan._finding import Edit


Apply = Callable[[List[str], Sequence[Edit]], List[str]]


def ported(source: _files.Source, edits: Sequence[Edit], apply: Apply
           ) -> Optional[Tuple[List[str], List[str]]]:
  """(the notebook's lines, the same with `edits` made in its cells by
  `apply`), or None when they cannot be written into its JSON as they
  stand (an edit on a line IPython reads otherwise, a cell's source not
  one string a line)."""
  try:
    raw = _files.read_bytes(source.path).decode("utf-8")
    notebook = json.loads(raw)
    cells = notebook["cells"]
    by_cell = _by_cell(source, edits)
  except (ValueError, KeyError, TypeError):
    return None
  lines = lines_of(raw)
  after = list(lines)
  for number in sorted(by_cell, reverse=True):  # Last first: lines hold.
    cell = cells[number - 1] if 0 < number <= len(cells) else {}
    old = cell.get("source")
    if not isinstance(old, list) or not old:
      return None
    text = "".join(old)
    ended = text.endswith(("\n", "\r"))
    before = lines_of(text if ended else text + "\n")
    if not _as_read(source, number, before, by_cell[number]):
      return None
    new = "".join(apply(before, by_cell[number]))
    cell["source"] = lines_of(new if ended else new[:-1])
    # Earlier cells of the same source come first in the file.
    skip = sum(c.get("source") == old for c in cells[:number - 1])
    if not _rewrite(after, old, cell["source"], skip):
      return None
  if _loaded("".join(after)) != notebook:
    return None
  return lines, after


def _by_cell(source: _files.Source, edits: Sequence[Edit]
             ) -> Dict[int, List[Edit]]:
  """The edits by cell, their lines the cell's; `ValueError` for one that
  spans two cells or lies outside them."""
  out: Dict[int, List[Edit]] = {}
  for edit in edits:
    line, cell = source.locate(edit.line)
    end, end_cell = source.locate(edit.end_line)
    if cell is None or cell != end_cell:
      raise ValueError("an edit outside one cell")
    out.setdefault(cell, []).append(
        Edit(line, edit.col, end, edit.end_col, edit.text))
  return out


def _as_read(source: _files.Source, cell: int, lines: List[str],
             edits: Sequence[Edit]) -> bool:
  """Whether the lines `edits` touch read in the scan's text as they are
  in the cell (no magic made a placeholder there)."""
  text = lines_of(source.text)
  for edit in edits:
    if (edit.line, edit.col) == (edit.end_line, edit.end_col) == (
        len(lines) + 1, 0):
      continue  # Lines added after the cell's last (an import).
    for line in range(edit.line, edit.end_line + 1):
      at = source.line_of(line, cell) - 1
      if line > len(lines) or at >= len(text) or (
          lines[line - 1].rstrip("\r\n") != text[at].rstrip("\r\n")):
        return False
  return True


def _rewrite(lines: List[str], old: List[str], new: List[str],
             skip: int = 0) -> bool:
  """Replaces in `lines` the run of lines that hold the strings `old`, one
  each (the first such run after `skip` others), by `new` at the same
  indentation; a string kept keeps its line as written (its escapes).
  Another run of the same strings (an output's text) may come first: the
  caller's check of the whole notebook then finds the wrong cell edited."""
  for start in range(len(lines) - len(old) + 1):
    if not all(_string(lines[start + i]) == text
               for i, text in enumerate(old)):
      continue
    if skip:
      skip -= 1
    else:
      run = lines[start:start + len(old)]
      indent = run[0][:len(run[0]) - len(run[0].lstrip())]
      comma = run[-1].rstrip().endswith(",")
      end = run[-1][len(run[-1].rstrip("\r\n")):] or "\n"
      kept = {j: run[i] for tag, i1, _, j1, j2 in difflib.SequenceMatcher(
          None, old, new, autojunk=False).get_opcodes() if tag == "equal"
              for i, j in zip(range(i1, i1 + j2 - j1), range(j1, j2))}
      written = []
      for j, text in enumerate(new):
        line = kept.get(j, indent + json.dumps(text, ensure_ascii=False))
        body = line.rstrip("\r\n").rstrip()
        body = body[:-1] if body.endswith(",") else body
        written.append(body + ("," if j < len(new) - 1 or comma else "")
                       + end)
      lines[start:start + len(old)] = written
      return True
  return False


def _string(line: str) -> Optional[str]:
  """The JSON string alone on `line` (a comma after it), else None."""
  text = line.strip()
  if text.endswith(","):
    text = text[:-1]
  if not text.startswith('"'):
    return None
  try:
    value = json.loads(text)
  except ValueError:
    return None
  return value if isinstance(value, str) else None


def _loaded(text: str) -> Any:
  try:
    return json.loads(text)
  except ValueError:
    return None
