"""A baseline: the findings a codebase has already, so that CI fails only
on new ones.

`--write-baseline FILE` writes one (the JSON of `--format json`, which
can serve as one too); `--baseline FILE` reads it. A finding is known
when the baseline holds one with the same path, idiom and fingerprint.
The fingerprint hashes the idiom, the finding's line without its comment
and with its spaces collapsed, and how many findings of that idiom on
such a line come before it in the file: it survives lines moving above
it, and a second copy of a known line is new. The file is untrusted: a
regular file of at most `MAX_BYTES`, at most `MAX_ENTRIES` entries.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
from typing import Counter, Iterable, List, Sequence, Tuple

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _lines
from tfpartial._tools.scan._finding import Finding
from tfpartial._tools.scan._suppress import FindingLines

MAX_BYTES = 16 * 2**20
MAX_ENTRIES = 100_000
Key = Tuple[str, str, str]  # (path, idiom, fingerprint)


def fingerprints(findings: Sequence[Finding], lines: FindingLines
                 ) -> List[str]:
  """One fingerprint per finding (16 hex digits)."""
  counts: Counter[Tuple[str, str, str]] = collections.Counter()
  prints = []
  for finding in findings:
    line = lines.text(finding)
    code = " ".join(line[:_lines.code_end(line)].split())
    seen = counts[(finding.path, finding.idiom, code)]
    counts[(finding.path, finding.idiom, code)] += 1
    text = f"{finding.idiom}\n{code}\n{seen}"
    prints.append(hashlib.sha256(
        text.encode("utf-8", "surrogatepass")).hexdigest()[:16])
  return prints


def path_key(path: str) -> str:
  """A path as baselines compare it: from the current folder, with `/`.

  >>> path_key("./src//train.py")
  'src/train.py'
  """
  if os.path.isabs(path):
    path = os.path.relpath(path)
  return os.path.normpath(path).replace(os.sep, "/")


def load(path: str) -> Counter[Key]:
  """The findings a baseline file holds, counted; `ValueError` saying what
  is wrong with it."""
  data = _files.read_bytes(path, MAX_BYTES)
  try:
    entries = json.loads(data.decode("utf-8-sig"))
  except (UnicodeDecodeError, ValueError, RecursionError) as error:
    raise ValueError(f"not JSON ({error})") from None
  if not isinstance(entries, list):
    raise ValueError("not a list of findings (write one with "
                     "--write-baseline FILE)")
  if len(entries) > MAX_ENTRIES:
    raise ValueError(f"more than {MAX_ENTRIES:,} findings")
  known: Counter[Key] = collections.Counter()
  for number, entry in enumerate(entries, 1):
    if not isinstance(entry, dict) or not all(
        isinstance(entry.get(key), str) for key in
        ("path", "idiom", "fingerprint")):
      raise ValueError(f"finding {number} has no path, idiom and "
                       "fingerprint (write the baseline again with "
                       "--write-baseline FILE)")
    known[(path_key(entry["path"]), entry["idiom"],
           entry["fingerprint"])] += 1
  return known


def split(findings: Sequence[Finding], prints: Sequence[str],
          known: Counter[Key], scanned: Iterable[str]
          ) -> Tuple[List[int], int, int]:
  """(the positions of the new findings, how many were known, how many
  of the baseline's findings in the files scanned were not found)."""
  left = collections.Counter(known)
  new = []
  for position, (finding, mark) in enumerate(zip(findings, prints)):
    key = (path_key(finding.path), finding.idiom, mark)
    if left[key] > 0:
      left[key] -= 1
    else:
      new.append(position)
  paths = {path_key(path) for path in scanned}
  gone = sum(count for key, count in left.items() if key[0] in paths)
  return new, len(findings) - len(new), gone


def write(path: str, text: str) -> None:
  """Writes `text` to `path` whole or not at all (through a file beside
  it, renamed); `ValueError` saying why it cannot."""
  folder = os.path.dirname(os.path.abspath(path))
  if os.path.isdir(path) or (os.path.exists(path) and
                             not os.path.isfile(path)):
    raise ValueError("not a regular file")
  if not os.path.isdir(folder):
    raise ValueError(f"there is no folder {folder}")
  temporary = os.path.join(folder, f".{os.path.basename(path)}."
                           f"{os.getpid()}.tmp")
  try:
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o666)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
      file.write(text)
    os.replace(temporary, path)
  except OSError as error:
    if os.path.lexists(temporary):
      os.unlink(temporary)
    raise ValueError(error.strerror or str(error)) from None
