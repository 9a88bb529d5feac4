"""Whether two steps' loops are phases of one run, followed through the
project's calls, for the later-stage rule (`_later_stage`): the op of
each is fetched only in the function that orders them (never in a
function it defines, nor anywhere else in the project, where a call in
the later loop may run it), and that function is never run again by a
loop around a call of it, at any depth of callers (a function holding
both loops called once per round alternates them). Names are matched
by spelling, so another function's `train_op` counts too: silent.
Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Set

from tfpartial._tools.scan._analysis import Analysis

# A comprehension or a generator runs what it holds again, as a loop.
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp,
          ast.DictComp, ast.GeneratorExp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
           ast.ClassDef)


class Read(NamedTuple):
  """One read of a name (or of an attribute of that name)."""

  node: ast.AST
  home: Optional[ast.AST]  # The innermost function or class; None: module.
  looped: bool  # Whether a loop of `home` holds it.
  called: bool  # Whether it is the callee of a call.
  fetched: bool  # Whether it is a fetch of a `.run(` (alone or listed).


def reads(analysis: Analysis) -> Dict[str, List[Read]]:
  """Every read of a name or an attribute in the project, by spelling
  (an attribute by its last part), read once.

  >>> from tfpartial._tools.scan import _project
  >>> class A:  # A stand-in holding the project's trees.
  ...   project = type("P", (), {"modules": [type("M", (), {
  ...       "tree": ast.parse("def f():\\n  for _ in x:\\n    g()\\n")})]})
  ...   once = staticmethod(lambda key, compute: compute())
  >>> [(r.looped, r.called) for r in reads(A())["g"]]
  [(True, True)]
  """
  def compute() -> Dict[str, List[Read]]:
    found: Dict[str, List[Read]] = {}
    for module in analysis.project.modules:
      if module.tree is not None:
        _read(module.tree, None, False, found)
    return found
  result = analysis.once("stage phases reads", compute)
  assert isinstance(result, dict)
  return result


def _read(node: ast.AST, home: Optional[ast.AST], looped: bool,
          found: Dict[str, List[Read]]) -> None:
  """Index the reads under `node` (iteratively: no deep recursion)."""
  stack = [(node, home, looped, False, False)]
  while stack:
    each, where, inside, callee, fetch = stack.pop()
    name = each.attr if isinstance(each, ast.Attribute) else (
        each.id if isinstance(each, ast.Name) else None)
    if name is not None and isinstance(
        getattr(each, "ctx", None), ast.Load):
      found.setdefault(name, []).append(
          Read(each, where, inside, callee, fetch))
    if isinstance(each, _SCOPES) and each is not node:
      where, inside = each, False
    elif isinstance(each, _LOOPS):
      inside = True
    first = _fetched(each)
    listed = fetch and isinstance(each, (ast.List, ast.Tuple))
    for child in ast.iter_child_nodes(each):
      stack.append((child, where, inside, isinstance(each, ast.Call) and (
          child is each.func), child is first or listed))


def _fetched(node: ast.AST) -> Optional[ast.AST]:
  """What a `.run(` call is given first (a name, or a list or a tuple
  of them, each a fetch), or None."""
  if isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == "run" and node.args:
    return node.args[0]
  return None


def alone(analysis: Analysis, names: List[str]) -> bool:
  """Whether the ops kept in `names` are read in one function (or a
  module's own statements) alone, only as fetches of a `.run(` (an op
  bound to another name may run anywhere), and that function never runs
  again under a loop around a call of it (`_repeated`)."""
  found = reads(analysis)
  read = [r for name in names for r in found.get(name.split(".")[-1], [])]
  if not all(r.fetched for r in read):
    return False  # Read another way: run again under another name?
  homes = {id(r.home): r.home for r in read}
  if len(homes) != 1:
    return False
  home = next(iter(homes.values()))
  return home is None or not _repeated(found, home)


def _repeated(found: Dict[str, List[Read]], home: ast.AST) -> bool:
  """Whether a loop or a comprehension runs `home` again through calls,
  or it is reached from itself or twice (recursion), or handed on, not
  called (a callback may be run by anything). Each function is taken
  once: linear in the reads of the names walked."""
  seen: Set[int] = set()
  todo = [home]
  while todo:
    each = todo.pop()
    if not isinstance(each, (ast.FunctionDef, ast.AsyncFunctionDef)):
      return True  # Called in a lambda or a class: run by anything.
    if id(each) in seen:
      return True  # Reached again: recursion (or two callers) repeats.
    seen.add(id(each))
    for r in found.get(each.name, []):
      if r.looped or not r.called:
        return True
      if r.home is not None:
        todo.append(r.home)
  return False


def never_run(analysis: Analysis, name: Optional[str]) -> bool:
  """Whether the op kept in `name` is read nowhere in the project (a
  step built and never fetched trains nothing)."""
  return name is not None and not reads(analysis).get(
      name.split(".")[-1])
