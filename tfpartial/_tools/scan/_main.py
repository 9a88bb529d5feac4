"""`tfpartial scan PATH... [--format text|json|sarif] [--diff]`: read the
files, scan them as one project, leave out what is suppressed inline or
known from a baseline, print, and exit 0 (no finding), 1 (findings) or 2
(bad input)."""

from __future__ import annotations

import contextlib
import gc
import sys
from typing import Iterator, Optional, Protocol, Sequence

from tfpartial._tools.scan import _baseline
from tfpartial._tools.scan import _diff
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _gate
from tfpartial._tools.scan import _report
from tfpartial._tools.scan import _scan


class Stream(Protocol):
  """Where the report and the messages go (a text file, or the command
  line's guarded stdout and stderr)."""

  def write(self, text: str, /) -> int: ...

  def flush(self) -> None: ...


@contextlib.contextmanager
def _uncollected() -> Iterator[None]:
  """Python's cycle collector paused while a project is read and
  scanned: its trees and scopes live until the report, so each
  collection walks them all and frees next to nothing (on a folder of
  700 notebooks it took 40% of the scan, and the peak memory is the
  same without it)."""
  collecting = gc.isenabled()
  gc.disable()
  try:
    yield
  finally:
    if collecting:
      gc.enable()


def run(paths: Sequence[str], form: str = "text", diff: bool = False,
        out: Optional[Stream] = None, err: Optional[Stream] = None,
        version: str = "0", gate: Optional[_gate.Options] = None) -> int:
  """Scans `paths` and prints the report; returns the exit status."""
  out = out or sys.stdout
  err = err or sys.stderr
  gate = gate or _gate.Options()
  files, missing, notes = _files.files_of(paths)
  for path in missing:
    print(f"tfpartial scan: error: no such file or folder: {path}", file=err)
  try:
    known = gate.known()
  except ValueError as error:
    print(f"tfpartial scan: error: {error}", file=err)
    return 2
  if missing:
    return 2
  with _uncollected():
    sources, unread = _files.read_all(files)
    findings, unparsed, stopped, partly = _scan.scan(sources)
  for line in notes + unread + unparsed + partly + stopped:
    print(f"tfpartial scan: {line}", file=err)
  read = len(sources) - len(unparsed)
  if files and not read:
    print("tfpartial scan: error: nothing readable", file=err)
    return 2
  screened = _gate.screen(findings, sources, known)
  for note in screened.notes:
    print(f"tfpartial scan: {note}", file=err)
  if gate.write_baseline:
    written = _write_baseline(gate.write_baseline, screened, err)
    return 2 if stopped else written
  findings = screened.findings
  if diff:
    data, diff_notes = _diff.diff(findings, _scan.texts_of(sources))
    _write_bytes(out, data)
    err.write(_report.by_hand(findings))
    for note in diff_notes:
      print(note, file=err)
  elif form == "json":
    out.write(_report.as_json(findings, screened.fingerprints))
  elif form == "sarif":
    out.write(_report.sarif(findings, version, screened.fingerprints))
  else:
    out.write(_report.text(findings))
    print(screened.summary(read), file=err)
  return 2 if stopped else gate.status(findings)


def _write_bytes(out: Stream, data: bytes) -> None:
  """The diff in the files' own bytes (a latin-1 file's diff is latin-1)."""
  buffer = getattr(out, "buffer", None)
  if buffer is not None:
    out.flush()
    buffer.write(data)
    buffer.flush()
  else:
    out.write(data.decode("utf-8", "surrogateescape"))


def _write_baseline(path: str, screened: _gate.Screened, err: Stream) -> int:
  """`--write-baseline FILE`: every finding, as `--format json` has them."""
  try:
    _baseline.write(path, _report.as_json(screened.findings,
                                          screened.fingerprints))
  except ValueError as error:
    print(f"tfpartial scan: error: --write-baseline {path}: {error}",
          file=err)
    return 2
  print(f"tfpartial scan: wrote {len(screened.findings)} finding(s) to "
        f"{path}", file=err)
  return 0
