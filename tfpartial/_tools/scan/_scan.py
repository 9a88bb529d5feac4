"""One scan: the files under the paths, each parsed, detected, explained
and ported; and the unified diff of the ports."""

from __future__ import annotations

import ast
import dataclasses
import difflib
import os
from typing import Dict, List, Sequence, Tuple

from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _detect
from tfpartial._tools.scan import _drift
from tfpartial._tools.scan import _explain
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _port
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._finding import Edit, Finding
from tfpartial._tools.scan._flow import Flow

# A file without any of these cannot hold a sink: it is not parsed.
SINK_WORDS = ("apply_gradients", ".apply(", "stop_gradient", "scatter_",
              "assign", "set_weights", "set_value", "constraint", "Constraint",
              "minimize", "gradients(", "gradient(")


@dataclasses.dataclass
class Result:
  """What one scan found, and what it could not read."""

  findings: List[Finding] = dataclasses.field(default_factory=list)
  errors: List[str] = dataclasses.field(default_factory=list)
  files: int = 0
  texts: Dict[str, str] = dataclasses.field(default_factory=dict)


def scan_text(path: str, text: str) -> List[Finding]:
  """The findings in one file's Python text (`SyntaxError` if it does not
  parse).

  >>> scan_text("a.py", "x = 1\\n")
  []
  """
  return scan_source(_files.Source(path, text))


def scan_source(source: _files.Source) -> List[Finding]:
  """The findings in one file."""
  if not any(word in source.text for word in SINK_WORDS):
    return []
  tree = ast.parse(source.text, filename=source.path)
  module = _scopes.collect(tree)
  flow = Flow()
  lines = source.text.splitlines(keepends=True)
  findings = []
  for hit in _detect.detect(module, flow, _order.Order(tree)):
    context = _context.find(module, hit.scope, hit.sink)
    message, drift = _explain.explain(hit, context)
    ported = _port.port(hit, tree, lines, flow) if not source.cells else (
        "a notebook: edit the cell as the port says")
    line, cell = source.locate(hit.node.lineno)  # type: ignore[attr-defined]
    findings.append(Finding(
        source.path, line, hit.node.col_offset + 1,  # type: ignore[attr-defined]
        hit.idiom, message, drift, _drift.CATALOGUE[hit.idiom][2],
        edits=ported if isinstance(ported, tuple) else (),
        by_hand=ported if isinstance(ported, str) else "", cell=cell))
  return findings


def scan_file(path: str) -> Tuple[List[Finding], str, str]:
  """(findings, error, text) for one file; the error is "" when it read."""
  try:
    source = _files.read(path)
    return scan_source(source), "", source.text
  except ValueError as error:
    return [], f"{path}: skipped: {error}", ""
  except SyntaxError as error:
    return [], (f"{path}:{error.lineno or 0}: skipped: does not parse "
                f"({error.msg}; Python 2?)"), ""
  except (RecursionError, MemoryError):
    return [], f"{path}: skipped: nested too deeply to parse", ""


def paths_of(paths: Sequence[str]) -> Tuple[List[str], List[str]]:
  """(files, missing): the files to read under `paths`, and the paths that
  do not exist."""
  files: List[str] = []
  missing: List[str] = []
  for path in paths:
    if os.path.isdir(path):
      files.extend(_files.walk(path))
    elif os.path.lexists(path):
      files.append(path)
    else:
      missing.append(path)
  return files, missing


def diff(findings: Sequence[Finding], texts: Dict[str, str]) -> str:
  """One unified diff porting every finding that has edits."""
  by_path: Dict[str, List[Edit]] = {}
  for finding in findings:
    by_path.setdefault(finding.path, []).extend(finding.edits)
  chunks: List[str] = []
  for path, edits in sorted(by_path.items()):
    if not edits or path not in texts:
      continue
    before = texts[path].splitlines(keepends=True)
    after = apply_edits(before, edits)
    name = os.path.relpath(path).replace(os.sep, "/")
    chunks.extend(difflib.unified_diff(before, after, f"a/{name}",
                                       f"b/{name}"))
  return "".join(chunks)


def apply_edits(lines: List[str], edits: Sequence[Edit]) -> List[str]:
  """`lines` with `edits` applied, last first so positions hold.

  >>> apply_edits(["a = g * m\\n"], [Edit(1, 4, 1, 9, "g")])
  ['a = g\\n']
  """
  text = list(lines)
  unique = sorted(set(edits), key=lambda e: (e.line, e.col, e.end_line,
                                             e.end_col), reverse=True)
  for edit in unique:
    head = "".join(text[edit.line - 1:edit.line])
    tail = "".join(text[edit.end_line - 1:edit.end_line])
    if edit.line > len(text):
      text.append(edit.text)
      continue
    start = _offset(head, edit.col)
    end = _offset(tail, edit.end_col)
    joined = head[:start] + edit.text + tail[end:]
    text[edit.line - 1:edit.end_line] = joined.splitlines(keepends=True)
  return text


def _offset(line: str, col: int) -> int:
  """`ast`'s columns count UTF-8 bytes; the text counts characters."""
  return len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))
