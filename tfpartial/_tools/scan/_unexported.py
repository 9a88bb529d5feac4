"""Whether a finding sits in a class or function that nothing runs: its
package's `__init__.py` imports names from its module one by one and
leaves it out (`from .gradients_attack import DLGAttack` beside an old
`AttackModel_Old`), and no module of the project, its own included,
names it anywhere but at its definition. A copy kept beside the one the
package exports: no step of it is ever built."""

from __future__ import annotations

import ast
import os
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project


def left_behind(project: _project.Project, module: _project.Module,
                line: int) -> bool:
  """Whether the top-level class or function of `module` around `line`
  is left out of its package's imports and named nowhere else.

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
  if tree is None or module.source.cells:
    return False
  defined = next((node for node in tree.body if isinstance(
      node, _names.DEFINITIONS) and node.lineno <= line <= (
          node.end_lineno or 0)), None)
  if defined is None or not _exports_others(project, module, defined.name):
    return False
  first = min([defined.lineno, *(d.lineno for d in defined.decorator_list)])
  return all(first <= at <= defined.lineno
             for at in module.lines_of((defined.name,))) and not any(
                 defined.name in other.words for other in project.modules
                 if other is not module)


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
  """The parsed `__init__.py` of the folder holding `module`."""
  wanted = os.path.join(os.path.dirname(module.path), "__init__.py")
  found = next((m for m in project.modules if m.path == wanted), None)
  if found is None or found is module or project.parsed(found) is None:
    return None
  return found
