"""Objects handed on into a module that reads names unnamed: a getter of
a built name or `vars(obj)` on a parameter (`def pick(obj, key): return
getattr(obj, key)`) reads whatever its callers pass, so it may reach a
module's objects, or the module itself handed on as a value
(`pick(model, key)`), from any module that calls it, though its own
module imports none of theirs. Read once a project, from the project's
import graph: linear in its imports."""

from __future__ import annotations

import ast
from typing import Dict, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _unnamed


def passed_in(analysis: Analysis) -> Set[int]:
  """The ids of the modules whose objects may be handed into a module
  reading names unnamed on anything but an imported module
  (`_unnamed.Reads.handing`): every module importing one (directly or
  through others), and what each of those imports."""
  def find() -> Set[int]:
    project = analysis.project
    handing = _unnamed.project_reads(analysis).handing
    if not handing:
      return set()
    importers: Dict[int, List[_project.Module]] = {}
    for module in _importing(project):
      for each in _unnamed.imported(project, module):
        importers.setdefault(each, []).append(module)
    callers = set(handing)
    stack = list(handing)
    found: Set[int] = set(handing)
    while stack:
      for module in importers.get(stack.pop(), ()):
        found.update(_unnamed.imported(project, module) | {id(module)})
        if id(module) not in callers:
          callers.add(id(module))
          stack.append(id(module))
    return found
  reached = analysis.once("handed:passed_in", find)
  assert isinstance(reached, set)
  return reached


def handed_on(analysis: Analysis) -> Set[int]:
  """The ids of the project's modules a module importing one uses as a
  value, not only as an attribute's base (`pick(model, key)`, `[model]`,
  `m = model`): the module object handed on. Every module, when one
  that imports does not parse.

  A module used only as `model.x` is not handed on:

  >>> tree = ast.parse("import m\\nf(m.x)\\ng(m)")
  >>> sorted(_values(tree, {"m": 1}))
  [1]
  """
  def find() -> Set[int]:
    project = analysis.project
    found: Set[int] = set()
    for module in _importing(project):
      parsed = project.parsed(module)
      if parsed is None:
        return {id(m) for m in project.modules}
      found |= _values(parsed.node, _spellings(project, module))
    return found
  handed = analysis.once("handed:handed_on", find)
  assert isinstance(handed, set)
  return handed


def _importing(project: _project.Project) -> List[_project.Module]:
  """The project's modules that may import (write the word `import`)."""
  return project.all_modules_with(["import"])


def _spellings(project: _project.Project, module: _project.Module
               ) -> Dict[str, int]:
  """How `module` spells each project module it imports as a module
  (`model`, `pkg.model` after `import pkg.model`) -> its id."""
  found: Dict[str, int] = {}
  for name, (where, attribute) in module.imports.items():
    level = len(where) - len(where.lstrip("."))
    dotted = where.lstrip(".")
    if attribute:
      dotted = f"{dotted}.{attribute}" if dotted else attribute
    target = project.find_module(dotted, module, level)
    if target is not None:
      found[name] = id(target)
  for dotted in module.dotted:
    target = project.find_module(dotted, module)
    if target is not None:
      found[dotted] = id(target)
  return found


def _values(tree: ast.AST, spellings: Dict[str, int]) -> Set[int]:
  """The ids of `spellings`' modules `tree` loads as a value."""
  if not spellings:
    return set()
  nodes = list(_scopes.walk(tree))
  bases = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
  found: Set[int] = set()
  for node in nodes:
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
        node.ctx, ast.Load) and id(node) not in bases:
      spelled = _names.dotted(node)
      if spelled in spellings:
        found.add(spellings[spelled])
  return found
