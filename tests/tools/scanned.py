"""What `tfpartial scan` finds in small synthetic sources: the shared
front of the scan tests (one file as text, or a project of files)."""

import sys
import textwrap

from tfpartial._tools.scan import _diff
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def in_text(code, idiom=None):
  """(idiom, line) of each finding in one dedented file (of one idiom)."""
  findings = _scan.scan_text("t.py", textwrap.dedent(code))
  return [(f.idiom, f.line) for f in findings
          if idiom is None or f.idiom == idiom]


def in_project(files):
  """(idiom, path, line) of each finding in a project of dedented files
  (`files` maps paths to sources; a lone source is `t.py`)."""
  if isinstance(files, str):
    files = {"t.py": files}
  sources = [_files.Source(path, textwrap.dedent(text))
             for path, text in files.items()]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, f.path, f.line) for f in findings]


def found(code):
  """(idiom, line) of each finding in a project of one dedented file."""
  return [(idiom, line) for idiom, _, line in in_project(code)]


def grads_mask_diff(text):
  """The one `grads-mask` finding of `m.py` and its `--diff` as text."""
  text = textwrap.dedent(text)
  findings = _scan.scan_text("m.py", text)
  assert [f.idiom for f in findings] == ["grads-mask"], findings
  data, _ = _diff.diff(findings, {"m.py": _files.Source("m.py", text)})
  return findings[0], data.decode()


def finding_and_diff(text, idiom):
  """The one finding of `idiom` in `m.py` and its `--diff` as text."""
  text = textwrap.dedent(text)
  findings = [f for f in _scan.scan_text("m.py", text) if f.idiom == idiom]
  assert len(findings) == 1, findings
  data, _ = _diff.diff(findings, {"m.py": _files.Source("m.py", text)})
  return findings[0], data.decode()


def calls_made(code, where="", events=("call", "c_call")):
  """(the Python calls `code()` makes, from the code of files whose path
  ends with `where`, generator resumes too; what it returns): work,
  counted, not timed, for the tests that work grows linearly."""
  count = [0]

  def profile(frame, event, arg):
    del arg
    if event in events and frame.f_code.co_filename.endswith(where):
      count[0] += 1

  sys.setprofile(profile)
  try:
    result = code()
  finally:
    sys.setprofile(None)
  return count[0], result


def scan_work(text, where=""):
  """The calls a scan of one file `big.py` holding `text` makes (see
  `calls_made`)."""
  return calls_made(lambda: _scan.scan_project(
      [_files.Source("big.py", text)]), where)[0]
