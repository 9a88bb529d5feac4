"""`tfpartial scan PATH... [--format text|json|sarif] [--diff]`: read the
files, scan them as one project, print, and exit 0 (no finding), 1
(findings) or 2 (bad input)."""

from __future__ import annotations

import sys
from typing import Optional, Sequence, TextIO

from tfpartial._tools.scan import _diff
from tfpartial._tools.scan import _report
from tfpartial._tools.scan import _scan


def run(paths: Sequence[str], form: str = "text", diff: bool = False,
        out: Optional[TextIO] = None, err: Optional[TextIO] = None,
        version: str = "0") -> int:
  """Scans `paths` and prints the report; returns the exit status."""
  out = out or sys.stdout
  err = err or sys.stderr
  files, missing = _scan.paths_of(paths)
  for path in missing:
    print(f"tfpartial scan: error: no such file or folder: {path}", file=err)
  if missing:
    return 2
  sources, unread = _scan.read_all(files)
  findings, unparsed = _scan.scan_project(sources)
  for error in unread + unparsed:
    print(f"tfpartial scan: {error}", file=err)
  read = len(sources) - len(unparsed)
  if files and not read:
    print("tfpartial scan: error: nothing readable", file=err)
    return 2
  if diff:
    data, notes = _diff.diff(findings, _scan.texts_of(sources))
    _write_bytes(out, data)
    err.write(_report.by_hand(findings))
    for note in notes:
      print(note, file=err)
  elif form == "json":
    out.write(_report.as_json(findings))
  elif form == "sarif":
    out.write(_report.sarif(findings, version))
  else:
    out.write(_report.text(findings))
    print(f"tfpartial scan: {len(findings)} finding(s) in {read} file(s)",
          file=err)
  return 1 if findings else 0


def _write_bytes(out: TextIO, data: bytes) -> None:
  """The diff in the files' own bytes (a latin-1 file's diff is latin-1)."""
  buffer = getattr(out, "buffer", None)
  if buffer is not None:
    out.flush()
    buffer.write(data)
    buffer.flush()
  else:
    out.write(data.decode("utf-8", "surrogateescape"))
