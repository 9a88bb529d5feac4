"""How a file Python does not parse as written is read: as Python 2, as
IPython reads a notebook's cell, with a last block of only comments
closed (`_tail`), through its unresolved merge conflicts (`_conflicts`),
or without the top-level blocks that do not parse (`_blocks`); and the
note saying so. Every line stays where it was.

>>> read("print 'x'\\n", "a.py").rewritten
'a Python 2 file'
"""

from __future__ import annotations

import ast
import bisect
from typing import Dict, List, NamedTuple, Optional, Set, Tuple

from tfpartial._tools.scan import _blocks
from tfpartial._tools.scan import _conflicts
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _notebook
from tfpartial._tools.scan import _py2
from tfpartial._tools.scan import _tail


# What a file read without its blocks that do not parse was read as.
WITHOUT_BLOCKS = "a file read without a block that does not parse"


class Read(NamedTuple):
  """A reading of a file that does not parse as written.

  Attributes:
    tree: Its tree (None when no reading parses).
    rewritten: What it was read as ("a Python 2 file"): no mechanical
      port then, its text is not the file's.
    dropped: The note on what was left out or read apart, or "".
    versions: How many versions of the file a scan reads (2: each side
      of its conflicts read as its own version, `version` picks one).
  """

  tree: Optional[ast.Module]
  rewritten: str = ""
  dropped: str = ""
  versions: int = 1


def read(text: str, path: str, version: int = 0) -> Read:
  """The reading of `text` (which Python does not parse): through its
  merge conflicts (on `version`'s side where both sides are read apart),
  else as the other readers read it, else without the blocks that do not
  parse (of the conflicts' side, where there are conflicts)."""
  conflicts = _conflicts.found(text)
  sides: List[Tuple[str, ast.Module, str]] = []
  if conflicts:
    for keep in (_conflicts.BOTH, _conflicts.FIRST, _conflicts.SECOND):
      tree, how = _parsed(_conflicts.version(text, conflicts, keep), path)
      if keep == _conflicts.BOTH:
        if tree is not None and not _rebound(tree, conflicts):
          sides.append((keep, tree, how))
          break
      elif tree is not None:
        sides.append((keep, tree, how))
  if sides:
    keep, tree, how = sides[min(version, len(sides) - 1)]
    return Read(tree, _conflicted(how), _note(
        path, conflicts, [s[0] for s in sides]), len(sides))
  tree, how = _other(text, path)
  if tree is not None:
    return Read(tree, how)
  if conflicts:
    text = _conflicts.version(text, conflicts, _conflicts.FIRST)
  blocks = _without_blocks(text, path)
  if blocks is None:
    return Read(None)
  tree, note = blocks
  if conflicts:
    note += (f"; read on the first side of each unresolved merge conflict "
             f"at lines {_conflicts.spans(conflicts)}")
  return Read(tree, WITHOUT_BLOCKS, note)


def _rebound(tree: ast.Module, conflicts: List[_conflicts.Conflict]
             ) -> bool:
  """Whether the two sides of a conflict bind a name in common in one
  scope (an assignment, a def, a class, an import): both kept, the second
  would hide the first, so each side is read as its own version."""
  bound: List[Tuple[int, str, int]] = []
  _bindings(tree, 0, bound)
  lines = sorted({line for _, _, line in bound})
  # The innermost conflict and side (0 first, 1 second) of each line.
  side: Dict[int, Tuple[int, int]] = {}
  for index, c in enumerate(conflicts):
    first_end = c.base if c.base is not None else c.middle
    for lo, hi, which in ((c.open, first_end, 0), (c.middle, c.close, 1)):
      for line in lines[bisect.bisect_right(lines, lo):
                        bisect.bisect_left(lines, hi)]:
        side.setdefault(line, (index, which))
  seen: Set[Tuple[int, str, int, int]] = set()
  for scope, name, line in bound:
    if line in side:
      index, which = side[line]
      if (scope, name, index, 1 - which) in seen:
        return True
      seen.add((scope, name, index, which))
  return False


def _bindings(node: ast.AST, scope: int,
              out: List[Tuple[int, str, int]]) -> None:
  """The names `node`'s statements bind, with their scope and line (from
  0); comprehensions and lambdas bind none outside themselves."""
  for child in ast.iter_child_nodes(node):
    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                          ast.ClassDef)):
      out.append((scope, child.name, child.lineno - 1))
      _bindings(child, id(child), out)
    elif isinstance(child, (ast.Import, ast.ImportFrom)):
      out.extend((scope, (a.asname or a.name).split(".")[0],
                  child.lineno - 1) for a in child.names)
    elif isinstance(child, (ast.Name, ast.Attribute, ast.Subscript)) and (
        isinstance(child.ctx, ast.Store)):
      target = _stored(child)
      if target is not None:
        out.append((scope, target, child.lineno - 1))
      _bindings(child, scope, out)
    elif isinstance(child, ast.ExceptHandler) and child.name:
      out.append((scope, child.name, child.lineno - 1))
      _bindings(child, scope, out)
    elif isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp,
                            ast.DictComp, ast.GeneratorExp)):
      # A walrus inside a comprehension binds in the enclosing scope.
      out.extend((scope, n.target.id, n.lineno - 1)
                 for n in ast.walk(child) if isinstance(n, ast.NamedExpr)
                 and isinstance(n.target, ast.Name)
                 and not isinstance(child, ast.Lambda))
    else:
      _bindings(child, scope, out)


def _stored(target: ast.expr) -> Optional[str]:
  """The dotted name a store target binds (`self.head`; a subscript's
  base: `cfg` of `cfg["head"]`), else None."""
  while isinstance(target, ast.Subscript):
    target = target.value
  return _names.dotted(target)


def _parsed(text: str, path: str) -> Tuple[Optional[ast.Module], str]:
  """The tree of `text` as written (how: "") or as the other readers
  read it."""
  try:
    return ast.parse(text, filename=path), ""
  except (SyntaxError, ValueError):
    return _other(text, path)


def _conflicted(how: str) -> str:
  """What a file read through its conflicts was read as."""
  found = "a file with unresolved merge conflicts"
  return f"{found}, read as {how}" if how else found


def _note(path: str, conflicts: List[_conflicts.Conflict],
          read: List[str]) -> str:
  """The line saying which conflicts a module was read through, and on
  which sides."""
  if read == [_conflicts.BOTH]:
    how = "read with both sides of each kept"
  elif len(read) == 2:
    how = ("read twice, on the first side of each and on the second, the "
           "findings of either reported")
  else:
    other = _conflicts.SECOND if read == [_conflicts.FIRST] else (
        _conflicts.FIRST)
    how = (f"read on the {read[0]} side of each (the {other} side does not "
           "parse and is not scanned)")
  base = any(c.base is not None for c in conflicts)
  return (f"{path}:{min(c.open for c in conflicts) + 1}: unresolved merge "
          f"conflicts at lines {_conflicts.spans(conflicts)}: {how}"
          f"{'; their diff3 base is not scanned' if base else ''} (the "
          "file cannot run as committed); the rest is scanned")


def _other(text: str, path: str) -> Tuple[Optional[ast.Module], str]:
  """The tree of a file read line for line as Python 2, or as IPython
  reads a notebook's cell (Colab's "Download .py" keeps `!pip install`
  and `%matplotlib` lines), or as both; and what it was read as. A last
  block left with only comments is closed first (`_tail`)."""
  closed = _tail.closed(text)
  if closed is not None:
    try:
      return (ast.parse(closed, filename=path),
              "a file whose last block is only comments")
    except (SyntaxError, ValueError):
      text = closed  # Python 2 too, perhaps.
  tree = _py2.parse(text, path)
  if tree is not None:
    return tree, "a Python 2 file"
  python = _notebook.python_of(text)
  if python is None or python == text:
    return None, ""
  try:
    tree = ast.parse(python, filename=path)
  except (SyntaxError, ValueError):
    tree = _py2.parse(python, path)
  return tree, "a file with IPython lines (`!pip ...`)"


def _without_blocks(text: str, path: str
                    ) -> Optional[Tuple[ast.Module, str]]:
  """The tree of `text` without its top-level blocks that do not parse,
  read as written or as Python 2 (the fewer lines left out), and the note
  saying which."""
  best: Optional[Tuple[ast.Module, List[_blocks.Dropped]]] = None
  for candidate in (text, _py2.repair(text)):
    found = _blocks.kept(candidate, path) if candidate else None
    if found is not None and (best is None or _lines_left_out(
        found[1]) < _lines_left_out(best[1])):
      best = found
  if best is None:
    return None
  _, _, line, why = best[1][0]
  blocks = ", ".join(f"{drop[0]}-{drop[1]}" for drop in sorted(best[1]))
  return best[0], (f"{path}:{line}: skipped lines {blocks}: they do not "
                   f"parse ({why}); the rest is scanned")


def _lines_left_out(dropped: List[_blocks.Dropped]) -> int:
  return sum(drop[1] - drop[0] + 1 for drop in dropped)
