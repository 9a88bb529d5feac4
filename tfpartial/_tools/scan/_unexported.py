"""Whether a finding sits in a class that, as far as the text of the
project shows, nothing can reach: its package's `__init__.py` imports
names from its module one by one and leaves it out (`from
.gradients_attack import DLGAttack` beside an old `AttackModel_Old`),
no module of the project, its own included, names it anywhere but at
its definition, and nothing could reach it without naming it: it has no
decorator (which may register it), no base class of the project (whose
`__init_subclass__` or metaclass may register it), no module can load
modules by a string (`import_module`, `__import__`), and no module that
looks names up by a string (`getattr(`, `eval(`, `globals()`, `vars(`,
a config file's class name reaches code only so) is its own module or
names it. Functions are never dropped (`def main(_)` is run by
`tf.app.run()` by name)."""

from __future__ import annotations

import ast
import os
from typing import Optional

from tfpartial._tools.scan import _project

# Words of a module that may look a class up by a string.
_LOOKUPS = ("getattr", "eval", "globals", "locals", "vars", "__dict__")
# Words of a module that may load any module by a string.
_LOADS = ("import_module", "__import__")


def left_behind(project: _project.Project, module: _project.Module,
                line: int) -> bool:
  """Whether the top-level class of `module` around `line` is left out
  of its package's imports, named nowhere else and reached by no lookup
  (the module's docstring).

  >>> from tfpartial._tools.scan import _files
  >>> project = _project.Project([
  ...     _files.Source("pkg/__init__.py", "from .m import New\\n"),
  ...     _files.Source("pkg/m.py", "class Old:\\n  pass\\nclass New:\\n  pass\\n")])
  >>> m = project.modules[1]
  >>> _ = project.parsed(m)
  >>> left_behind(project, m, 2), left_behind(project, m, 4)
  (True, False)
  """
  tree = module.tree
  if tree is None or module.source.cells or module.scope is None:
    return False
  defined = next((node for node in tree.body if isinstance(
      node, ast.ClassDef) and node.lineno <= line <= (
          node.end_lineno or 0)), None)
  if defined is None or defined.decorator_list or any(
      _names_project(project, module, base) for base in defined.bases) or (
          not _exports_others(project, module, defined.name)):
    return False
  stem = os.path.splitext(os.path.basename(module.path))[0]
  elsewhere = [m for m in project.all_modules_with((defined.name,))
               if m is not module]
  return not elsewhere and all(at == defined.lineno for at in (
      module.lines_of((defined.name,)))) and not _looked_up(
          project, module, stem)


def _names_project(project: _project.Project, module: _project.Module,
                   base: ast.expr) -> bool:
  """Whether a base class is the project's (or not a plain name)."""
  dotted = ast.unparse(base)
  if dotted == "object":
    return False
  assert module.scope is not None
  return not all(part.isidentifier() for part in dotted.split(".")) or (
      project.resolve(module.scope, dotted) is not None)


def _looked_up(project: _project.Project, module: _project.Module,
               stem: str) -> bool:
  """Whether some module may reach `module`'s names by a string: one
  loading modules by name, or one looking names up that is `module` or
  names it."""
  if project.all_modules_with(_LOADS):
    return True
  return any(other is module or stem in other.words
             for other in project.all_modules_with(_LOOKUPS))


def _exports_others(project: _project.Project, module: _project.Module,
                    name: str) -> bool:
  """Whether the `__init__.py` beside `module` imports names from it one
  by one (`from .m import A, B`), `name` not among them."""
  package = _init_of(project, module)
  if package is None or package.tree is None:
    return False
  stem = os.path.splitext(os.path.basename(module.path))[0]
  imported = [node for node in ast.walk(package.tree) if isinstance(
      node, ast.ImportFrom) and node.level == 1 and node.module == stem]
  return bool(imported) and all(
      alias.name != "*" and alias.name != name
      for node in imported for alias in node.names)


def _init_of(project: _project.Project, module: _project.Module
             ) -> Optional[_project.Module]:
  """The parsed `__init__.py` of the folder holding `module` (found by
  the project's path index)."""
  found = project.find_module("", module, level=1)
  if found is None or found is module or os.path.basename(
      found.path) != "__init__.py" or project.parsed(found) is None:
    return None
  return found
