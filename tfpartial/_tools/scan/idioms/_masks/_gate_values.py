"""What may set a training gate beyond the calls the project spells
(`_rows.gates_open` asked by `_idle_project`): a function passed as a
value (`fire.Fire(main)`, `app.run(main)`, a registry, a
`functools.partial`) is called with what a command line gives; a class
with subclasses is built through them (`super().__init__(args,
training=True)`); an attribute written from outside its class
(`model.training = True`) is whatever that write says. And what a
parameter's default (`default`) or a passed constant (`truth`) may be."""

from __future__ import annotations

import ast
from typing import Callable, FrozenSet, List, Optional, Set

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis


def unseen(analysis: Analysis, scope: _scopes.Scope) -> bool:
  """Whether `scope`'s function may be called by calls the project does
  not spell: it (or its class, for a method) is named other than as
  the function of a call, or its class has subclasses."""
  names = {scope.name}
  if scope.cls is not None:
    names = {scope.cls.name}
    if analysis.project.subclasses(scope.cls):
      return True
  return bool(names & _valued(analysis, frozenset(names)))


def written_outside(analysis: Analysis, attr: str) -> bool:
  """Whether some module writes `x.attr = ...` with `x` other than
  `self` (an attribute set from outside its class)."""
  key = f"gate written outside {attr}"
  found = analysis.once(key, lambda: any(
      isinstance(node, ast.Attribute) and node.attr == attr and isinstance(
          node.ctx, ast.Store) and not (isinstance(node.value, ast.Name) and (
              node.value.id == "self"))
      for tree in _trees(analysis, attr) for node in ast.walk(tree)))
  assert isinstance(found, bool)
  return found


def _valued(analysis: Analysis, names: FrozenSet[str]) -> FrozenSet[str]:
  """Those of `names` some module reads other than as a call's
  function (one walk per name and analysis)."""
  valued: Set[str] = set()
  for name in names:
    if analysis.once(f"gate valued {name}", _valued_once(analysis, name)):
      valued.add(name)
  return frozenset(valued)


def _valued_once(analysis: Analysis, name: str) -> Callable[[], bool]:
  return lambda: any(_as_value(tree, name) for tree in _trees(analysis, name))


def _as_value(tree: ast.AST, name: str) -> bool:
  called = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Call):
      called.add(id(node.func))
  return any(isinstance(node, ast.Name) and node.id == name and isinstance(
      node.ctx, ast.Load) and id(node) not in called
             for node in ast.walk(tree))


def _trees(analysis: Analysis, word: str) -> List[ast.Module]:
  project = analysis.project
  trees: List[ast.Module] = []
  for module in project.all_modules_with((word,)):
    if project.parsed(module) is not None and module.tree is not None:
      trees.append(module.tree)
  return trees


def default(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str
             ) -> Optional[ast.expr]:
  arguments = function.args
  positional = [*arguments.posonlyargs, *arguments.args]
  defaults = dict(zip([a.arg for a in positional][-len(arguments.defaults):]
                      if arguments.defaults else [], arguments.defaults))
  defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs,
                                            arguments.kw_defaults) if d})
  return defaults.get(name)


def truth(value: Optional[ast.expr], wanted: bool) -> bool:
  """Whether `value` may be true (or false, as `wanted`): a constant is
  what it is, a missing value is `None`, anything else may be either."""
  if value is None:
    return not wanted
  if isinstance(value, ast.Constant):
    return bool(value.value) == wanted
  return True
