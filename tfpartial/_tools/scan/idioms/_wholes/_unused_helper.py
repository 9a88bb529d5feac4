"""A step in a helper the project's own script imports and never calls:
`from bnn_misc import compute_gradients` in the training script, which
builds its step with the optimizer's own `compute_gradients` instead,
while no module of the project reads the helper's name (part 29's
BNN-TensorFlow). The helper's step is never built. A helper no module
imports stays a finding (a library's, called from outside), and so does
one a package's `__init__.py` re-exports. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis


def imported_unread(analysis: Analysis, scope: _scopes.Scope) -> bool:
  """Whether the module-level function the step's `scope` is in is
  imported by name by another module of the project (none a package's
  `__init__.py`), no module star-imports its module, and no module reads
  it: neither its own nor any other, whatever its import (by name,
  `import *`, `module.name`); each module is indexed once, each function
  asked once."""
  function = top_function(scope)
  if function is None:
    return False
  found = analysis.once(
      f"imported unread {id(function)}",
      lambda: _imported_unread(analysis, function, scope))
  return found is True


def _imported_unread(analysis: Analysis, function: ast.FunctionDef,
                     scope: _scopes.Scope) -> bool:
  project = analysis.project
  home = project.module_of(scope)
  name = function.name
  if home.tree is None or name in loaded_names(analysis, home.tree) or (
      "__all__" in home.source.text) or id(home) in _starred(analysis):
    return False  # Read at home, exported, or star-imported somewhere.
  importers = 0
  for module in project.all_modules_with((name,)):
    if module is home:
      continue
    top = project.parsed(module)
    if top is None or module.tree is None:
      return False
    imports, attributes = _index(analysis, module, top)
    if name in attributes or name in loaded_names(analysis, module.tree):
      return False  # `bnn_misc.compute_gradients(...)`, or a call after
      # `from bnn_misc import *`: read, whatever the import's form.
    for bound in imports.get(name, ()):
      if not _is(project.resolve(top, bound), function):
        continue
      if module.source.path.endswith("__init__.py") or (
          bound in loaded_names(analysis, module.tree)):
        return False  # Re-exported, or read under its `as` name.
      importers += 1
  return importers > 0


def _starred(analysis: Analysis) -> FrozenSet[int]:
  """The modules (by id) some module of the project imports with
  `from ... import *`, gathered once per scan."""
  def gather() -> FrozenSet[int]:
    project = analysis.project
    found: Set[int] = set()
    for module in project.modules:
      if "import *" not in module.source.text or (
          project.parsed(module) is None):
        continue
      for where in module.star:
        target = project.find_module(where.lstrip("."), module, len(
            where) - len(where.lstrip(".")))
        if target is not None:
          found.add(id(target))
    return frozenset(found)

  starred = analysis.once("star-imported modules", gather)
  assert isinstance(starred, frozenset)
  return starred


def _index(analysis: Analysis, module: _project.Module, top: _scopes.Scope
           ) -> Tuple[Dict[str, List[str]], FrozenSet[str]]:
  """The names `module` imports by name (each with the names it binds
  them to) and the attributes it reads from an imported module
  (`bnn_misc.compute_gradients`), gathered once per module."""
  found = analysis.once(f"imports and reads {id(module)}",
                        lambda: _indexed(analysis.project, module, top))
  assert isinstance(found, tuple)
  return found


def _indexed(project: _project.Project, module: _project.Module,
             top: _scopes.Scope
             ) -> Tuple[Dict[str, List[str]], FrozenSet[str]]:
  imports: Dict[str, List[str]] = {}
  attributes: Set[str] = set()
  modules: Dict[str, bool] = {}
  assert module.tree is not None
  for node in _scopes.walk(module.tree):
    if isinstance(node, ast.ImportFrom):
      for alias in node.names:
        imports.setdefault(alias.name, []).append(alias.asname or alias.name)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
      held = node.value.id
      if held not in modules:
        modules[held] = isinstance(project.resolve(top, held),
                                   _project.Module)
      if modules[held]:
        attributes.add(node.attr)
  return imports, frozenset(attributes)


def top_function(scope: _scopes.Scope) -> Optional[ast.FunctionDef]:
  """The module-level function `scope` is (or is nested in)."""
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.parent is not None and (
      place.parent.parent is not None):
    place = place.parent
  if place is None or place.cls is not None:
    return None
  node = place.node
  return node if isinstance(node, ast.FunctionDef) else None


def _is(target: object, function: ast.FunctionDef) -> bool:
  return isinstance(target, tuple) and target[0] is function


def loaded_names(analysis: Analysis, tree: ast.AST) -> FrozenSet[str]:
  """The names `tree` reads as values (a call, a callback passed on),
  gathered once per tree."""
  found = analysis.once(f"loaded names {id(tree)}", lambda: frozenset(
      node.id for node in _scopes.walk(tree)
      if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)))
  assert isinstance(found, frozenset)
  return found
