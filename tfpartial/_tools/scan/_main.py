"""`tfpartial scan PATH... [--format text|json|sarif] [--diff]`: read,
scan in two processes when there are many files, print, and exit 0 (no
finding), 1 (findings) or 2 (bad input)."""

from __future__ import annotations

import concurrent.futures
import os
import sys
import time
from typing import Dict, List, Optional, Sequence, TextIO, Tuple

from tfpartial._tools.scan import _report
from tfpartial._tools.scan import _scan
from tfpartial._tools.scan._finding import Finding

PARALLEL_FROM = 300  # Fewer files scan faster than processes start.
PROGRESS_AFTER = 1.0  # Seconds before a terminal gets a progress line.


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
  findings, errors, texts, read = _scan_all(files, err)
  for error in errors:
    print(f"tfpartial scan: {error}", file=err)
  if files and not read:
    print("tfpartial scan: error: nothing readable", file=err)
    return 2
  findings.sort(key=lambda f: f.where)
  if diff:
    out.write(_scan.diff(findings, texts))
    err.write(_report.by_hand(findings))
  elif form == "json":
    out.write(_report.as_json(findings))
  elif form == "sarif":
    out.write(_report.sarif(findings, version))
  else:
    out.write(_report.text(findings))
    print(f"tfpartial scan: {len(findings)} finding(s) in {read} file(s)",
          file=err)
  return 1 if findings else 0


def _scan_all(files: List[str], err: TextIO
              ) -> Tuple[List[Finding], List[str], Dict[str, str], int]:
  findings: List[Finding] = []
  errors: List[str] = []
  texts = {}
  read = 0
  terminal = bool(getattr(err, "isatty", lambda: False)())
  started = time.monotonic()
  for done, (found, error, text) in enumerate(_results(files), 1):
    if error:
      errors.append(error)
    else:
      read += 1
    if found:
      findings.extend(found)
      texts[found[0].path] = text
    if terminal and done % 50 == 0 and (
        time.monotonic() - started > PROGRESS_AFTER):
      print(f"\rscanning {done}/{len(files)}", end="", file=err, flush=True)
  if terminal and time.monotonic() - started > PROGRESS_AFTER:
    print("\r" + " " * 40 + "\r", end="", file=err, flush=True)
  return findings, errors, texts, read


def _results(files: List[str]):  # type: ignore[no-untyped-def]
  if len(files) < PARALLEL_FROM or (os.cpu_count() or 1) < 2:
    yield from map(_scan.scan_file, files)
    return
  with concurrent.futures.ProcessPoolExecutor(2) as pool:
    yield from pool.map(_scan.scan_file, files, chunksize=32)
