"""One scan of a whole project: every idiom's hits, explained and ported;
and the unified diff of the ports."""

from __future__ import annotations

import ast
import gc
from typing import Dict, List, NamedTuple, Sequence, Set, Tuple

from tfpartial._tools.scan import _cells
from tfpartial._tools.scan import _deep
from tfpartial._tools.scan import _diff
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _unexported
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._edits import Port
from tfpartial._tools.scan._finding import Finding
from tfpartial._tools.scan.idioms import all_idioms
from tfpartial._tools.scan.idioms._idiom import Hit, Idiom, PLAIN

IDIOMS = all_idioms()


class Scanned(NamedTuple):
  """What one scan of a project gives: its findings, the files it could
  not read, the idioms that stopped on it (a scanner bug: the report
  lacks what they would have found), and the files read without a block
  that does not parse."""

  findings: List[Finding]
  unread: List[str]
  stopped: List[str]
  partly: List[str]


def scan_project(sources: Sequence[_files.Source]
                 ) -> Tuple[List[Finding], List[str]]:
  """(findings, errors) of the files of one project, read together so that
  a helper, a method or an import in one file is followed from another.

  >>> scan_project([_files.Source("a.py", "x = 1\\n")])
  ([], [])
  """
  scanned = scan(sources)
  return scanned.findings, scanned.unread + scanned.stopped


def scan(sources: Sequence[_files.Source]) -> Scanned:
  """`scan_project`, with the idioms that stopped apart from the files
  that could not be read: one idiom's error on code it never saw costs
  that idiom's findings, not the others'. A file read twice through its
  conflicts (`_reread`) is scanned again on their second sides, and the
  findings of either reported (one per line and idiom: the second
  side's finding on a line the first found is dropped, whatever its
  column); the files that could not be read and the notes on files read
  in part are the first scan's (the second reads the same files)."""
  scanned, twice = _scan_version(sources, 0)
  if not twice:
    return scanned
  again, _ = _scan_version(sources, 1)
  found = {(f.path, f.line, f.idiom) for f in scanned.findings}
  findings = scanned.findings + [
      f for f in again.findings if (f.path, f.line, f.idiom) not in found]
  findings.sort(key=lambda f: (f.path, f.line, f.col, f.idiom))
  stopped = scanned.stopped + [s for s in again.stopped
                               if s not in scanned.stopped]
  return Scanned(findings, scanned.unread, stopped, scanned.partly)


def _scan_version(sources: Sequence[_files.Source], version: int
                  ) -> Tuple[Scanned, bool]:
  """One scan of the project reading `version` of each file read twice
  through its conflicts; and whether any file was."""
  project = _project.Project(sources, version)
  analysis = Analysis(project)
  findings: List[Finding] = []
  stopped: List[str] = []
  seen: Set[Tuple[str, int]] = set()
  collecting = gc.isenabled()
  gc.disable()  # Trees are kept to the end: a collection finds nothing.
  try:
    for idiom in IDIOMS:
      try:
        found = _found(idiom, analysis, seen)
      except Exception as error:  # noqa: BLE001 (any bug, reported)
        stopped.append(
            f"error: {idiom.id} stopped on this project "
            f"({type(error).__name__}: {error}); its findings are missing "
            "from this report (a scanner bug: please report it)")
        continue
      findings.extend(found)
  finally:
    errors = [m.error for m in project.modules if m.error]
    partly = [m.dropped for m in project.modules if m.dropped]
    twice = any(m.versions > 1 for m in project.modules)
    _release(project, analysis)
    if collecting:
      gc.enable()
  findings.sort(key=lambda f: (f.path, f.line, f.col, f.idiom))
  return Scanned(findings, errors, stopped, partly), twice


def _found(idiom: Idiom, analysis: Analysis, seen: Set[Tuple[str, int]]
           ) -> List[Finding]:
  """One idiom's findings, each place once (`seen` across idioms' runs)."""
  found = []
  for hit in idiom.detect(analysis):
    key = (idiom.id, id(getattr(hit, "shown", None) or hit.node))
    if key not in seen and not _redefined(hit, analysis) and not (
        _left_behind(hit, analysis)):
      seen.add(key)
      found.append(_finding(idiom, hit, analysis))
  return found


def _redefined(hit: Hit, analysis: Analysis) -> bool:
  """Whether the hit is inside a top-level class or function that the
  module defines again further down before anything reads the name (a
  class pasted twice, the first copy left above): the first never runs.
  A notebook's cells may run in between, so theirs are kept."""
  module = analysis.module(hit.scope)
  line = getattr(hit.scope.node, "lineno", None)
  if module.tree is None or module.source.cells or line is None:
    return False
  body = module.tree.body
  for at, node in enumerate(body):
    if isinstance(node, _names.DEFINITIONS) and node.lineno <= line <= (
        node.end_lineno or 0):
      return _made_again(node.name, body[at + 1:])
  return False


def _left_behind(hit: Hit, analysis: Analysis) -> bool:
  """Whether the hit is inside a top-level class that its package
  leaves out of what it imports, that nothing names and that no
  decorator, project base or lookup by a string may reach
  (`_unexported`)."""
  line = getattr(hit.scope.node, "lineno", None)
  return line is not None and _unexported.left_behind(
      analysis.project, analysis.module(hit.scope), line)


def _made_again(name: str, later: Sequence[ast.stmt]) -> bool:
  """Whether `later` defines `name` again before reading it (a class
  that extends the first, `class Model(Model):`, reads it)."""
  again = next((at for at, statement in enumerate(later) if isinstance(
      statement, _names.DEFINITIONS) and statement.name == name), None)
  if again is None:
    return False
  head = later[again]
  read: List[ast.AST] = list(later[:again])
  if isinstance(head, ast.ClassDef):
    read += [*head.decorator_list, *head.bases, *head.keywords]
  elif isinstance(head, (ast.FunctionDef, ast.AsyncFunctionDef)):
    read += [*head.decorator_list, head.args]
  return not any(isinstance(n, ast.Name) and n.id == name
                 for each in read for n in ast.walk(each))


def _release(project: _project.Project, analysis: Analysis) -> None:
  """Breaks the cycles between scopes, modules and the analysis, so the
  trees are freed as the scan returns: left to the cycle collector (at
  exit, for the command), millions of nodes took longer than the scan."""
  for module in project.modules:
    if module.scope is not None:
      read = list(module.scope.read())
      unread = [c for s in read for c in s.children
                if "nodes" not in c.__dict__]
      for scope in read:
        for info in scope.classes.values():
          info.methods.clear()
          info.assigned.clear()
      for scope in read + unread:
        scope.__dict__.clear()
    module.scope = module.tree = None
    module.source.tree.clear()  # A notebook's tree that was never taken.
  analysis.__dict__.clear()
  project.__dict__.clear()


def _finding(idiom: Idiom, hit: Hit, analysis: Analysis) -> Finding:
  module = analysis.module(hit.scope)
  shown = getattr(hit, "shown", None) or hit.node  # Where it is used.
  home = analysis.flow.origin.get(id(hit.node))
  if home is not None and shown is hit.node:  # A helper's, maybe elsewhere.
    module = analysis.module(home)
  context = analysis.context(hit.scope).find(hit.scope, hit.sink)
  message, reasons = idiom.explain(hit, context)
  source = module.source
  caller = analysis.module(hit.scope)  # Where the port's edits go.
  ported = _port(idiom, hit, analysis)
  rewritten = module.rewritten or caller.rewritten  # Its lines not its own.
  if source.cells or caller.source.cells:
    ported = _in_notebook(ported, caller.source)
  elif rewritten and not isinstance(ported, str):
    ported = f"{rewritten}: port it by hand"
  line, cell = source.locate(shown.lineno)
  link, advice = idiom.advice(hit)
  return Finding(
      source.path, line, shown.col_offset + 1, idiom.id,
      f"{message} (see {link})", "; ".join(reasons or [PLAIN]),
      advice, edits=ported if isinstance(ported, tuple) else (),
      by_hand=ported if isinstance(ported, str) else "", cell=cell,
      edited="" if caller is module else caller.source.path)


def _in_notebook(port: Port, edited: _files.Source) -> Port:
  """A port that touches a notebook: its edits when they can be written
  into the cells' JSON (`_cells`), else by hand; a port by hand (or none
  needed) says why, as in a `.py` file."""
  if isinstance(port, str) or not edited.cells or _cells.ported(
      edited, port, _diff.apply_edits) is not None:
    return port
  return "a notebook: edit the cell as the port says"


def _port(idiom: Idiom, hit: Hit, analysis: Analysis) -> Port:
  """The port, or why it is by hand; a port that cannot be worked out
  never loses the finding; none rewrites a part `_deep` cut."""
  try:
    if any(_deep.holds_cut(node) for node in (hit.node, hit.sink) if node):
      raise _deep.TooDeep()
    return idiom.port(hit, analysis)
  except _deep.TooDeep as error:
    return str(error)
  except (ValueError, KeyError, IndexError, AttributeError, TypeError,
          AssertionError, RecursionError) as error:
    return f"the code is not plain enough to port mechanically ({error})"


def scan_text(path: str, text: str) -> List[Finding]:
  """The findings in one file's Python text.

  >>> scan_text("a.py", "x = 1\\n")
  []
  """
  findings, errors = scan_project([_files.Source(path, text)])
  if errors and not findings:
    raise SyntaxError(errors[0])
  return findings


def texts_of(sources: Sequence[_files.Source]) -> Dict[str, _files.Source]:
  return {s.path: s for s in sources}
