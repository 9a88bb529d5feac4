"""Reads of an attribute or a module's name that do not name it:
`getattr(m, key)`, `operator.attrgetter(key)`, `m.__getattribute__(key)`
with a name built at run time, `vars(m)`, `m.__dict__`, `eval`, `exec`.
A rule that silences a finding because a name is read only one way
keeps the finding where such a read may reach the object."""

from __future__ import annotations

import ast
from typing import Dict, NamedTuple, Optional, Set

from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _builtin_calls

# The words of a module that may read an attribute without naming it.
WORDS = ("getattr", "vars", "__dict__", "exec", "eval", "attrgetter",
         "__getattribute__")
# Calls that read an attribute by a name they are given as a string.
_GETTERS = {"getattr", "attrgetter", "__getattribute__"}


def getter(call: ast.Call, builtins: Optional[Dict[int, str]] = None
           ) -> bool:
  """Whether `call` reads an attribute by a name it is given: a getter
  by its spelling, or the builtin `getattr` under another name (`from
  builtins import getattr as read`: `builtins`, `builtin_calls`'s).

  >>> getter(ast.parse("builtins.getattr(m, k)").body[0].value)
  True
  """
  func = call.func
  called = func.id if isinstance(func, ast.Name) else (
      func.attr if isinstance(func, ast.Attribute) else "")
  return called in _GETTERS or (builtins or {}).get(id(call)) == "getattr"


class Reads(NamedTuple):
  """Where a project may read names unnamed, by the ids of the modules
  such reads may reach: a module's own and those it imports."""

  unparsed: bool  # A module that may read any does not parse.
  objects: Set[int]  # By `vars`, `__dict__`, `eval`, `exec`.
  modules: Set[int]  # By a getter on a module (`getattr(tf.nn, k)`).
  others: Set[int]  # By a getter on anything else (`getattr(args, k)`).


def project_reads(analysis: Analysis) -> Reads:
  """The project's `Reads`, read once a project from the trees of the
  modules that write a word of `WORDS`. A getter on a module reaches
  only the modules its module imports."""
  def find() -> Reads:
    project = analysis.project
    found = Reads(False, set(), set(), set())
    for module in project.all_modules_with(WORDS):
      tree = project.parsed(module)
      if tree is None:
        return found._replace(unparsed=True)
      nodes = list(_scopes.walk(tree.node))
      near = imported(project, module)
      calls = _builtin_calls.of_module(analysis, tree.node)
      if any(any_object(n, calls) for n in nodes):
        found.objects.update(near | {id(module)})
      if any(_built(n, module, True, calls) for n in nodes):
        found.modules.update(near)
      if any(_built(n, module, False, calls) for n in nodes):
        found.others.update(near | {id(module)})
    return found
  reads = analysis.once("unnamed:project", find)
  assert isinstance(reads, Reads)
  return reads


def imported(project: _project.Project, module: _project.Module
             ) -> Set[int]:
  """The ids of the project's modules `module` imports (or imports a
  name from)."""
  found: Set[int] = set()
  wheres = list(module.imports.values()) + [(w, "") for w in module.star]
  for where, name in wheres:
    level = len(where) - len(where.lstrip("."))
    dotted = where.lstrip(".")
    candidates = [project.find_module(dotted, module, level)]
    if name:
      candidates.append(project.find_module(
          f"{dotted}.{name}" if dotted else name, module, level))
    found.update(id(m) for m in candidates if m is not None)
  return found


def any_object(node: ast.AST, builtins: Dict[int, str]) -> bool:
  """Whether `node` may read any name of any object or scope: a call of
  the builtin `vars`, `eval` or `exec` (`builtins`, `builtin_calls`'s),
  `x.__dict__`."""
  if isinstance(node, ast.Attribute):
    return node.attr == "__dict__"
  return builtins.get(id(node)) in {"vars", "eval", "exec"}


def _built(node: ast.AST, module: _project.Module, on_modules: bool,
           builtins: Dict[int, str]) -> bool:
  """Whether `node` is a getter of a name not a literal, on a module
  `module` imports if `on_modules`, on anything else if not (the builtin
  `getattr` held as a value where it may be called, `read = getattr`,
  `functools.reduce(getattr, path, cfg)`: on anything else, as a call
  on an object that is not a module; what it is called on is not
  read, and a module's name read so is not followed)."""
  if isinstance(node, (ast.Name, ast.Attribute)):
    return not on_modules and builtins.get(id(node)) == "getattr"
  if not isinstance(node, ast.Call) or not getter(node, builtins) or any(
      isinstance(a, ast.Constant) for a in node.args[:2]):
    return False
  return _on_module(node, module, builtins) == on_modules


def _on_module(call: ast.Call, module: _project.Module,
               builtins: Dict[int, str]) -> bool:
  """Whether `getattr(m.x, ...)` (the builtin, or any call spelled so)
  reads from a module `m` imports."""
  spelled = isinstance(call.func, ast.Name) and call.func.id == "getattr"
  if not spelled and builtins.get(id(call)) != "getattr":
    return False
  root = call.args[0] if call.args else None
  while isinstance(root, ast.Attribute):
    root = root.value
  return isinstance(root, ast.Name) and module.imports.get(
      root.id, ("", "x"))[1] == ""
