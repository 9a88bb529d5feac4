"""A copy of a variable taken under the name a constructor was given it
by: a callback's `__init__(self, var, mask)` keeps `self.var = var` and
`self.saved = tf.identity(var)`, and its hook writes `self.var` back
from `self.saved`. The copy is of `self.var` (the same object), though
the flow names it by the parameter (`copy:var`).
"""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels


def copy_of(project: _project.Project, scope: _scopes.Scope,
            target: ast.expr, found: Labels, base: str
            ) -> Optional[ast.AST]:
  """The label of `found` that copies `target` (`base` its root): its
  `copy:`, its `restore:`, or a copy of the parameter it was kept from."""
  return found.get(f"copy:{base}") or found.get(f"restore:{base}") or (
      _copy_of_kept(project, scope, target, found))


def _copy_of_kept(project: _project.Project, scope: _scopes.Scope,
                  target: ast.expr, found: Labels) -> Optional[ast.AST]:
  """The `copy:P` label of `found` when `target` (`self.X`, written in a
  method of `scope`'s class) is kept from the parameter `P` of a method
  that also takes the copy (`copy:P.kernel` for `self.X.kernel`, a
  layer kept whole and its kernel copied), else None."""
  name = _names.root(target)  # `self.X` of `self.X[:10]`.
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  if place is None or place.cls is None or not name.startswith("self.") or (
      name.count(".") < 1):
    return None
  kept, _, rest = name[5:].partition(".")
  for value, method in project.attribute(place.cls, f"self.{kept}"):
    if not isinstance(value, ast.Name) or value.id not in method.params:
      continue
    copy = found.get(f"copy:{value.id}{'.' if rest else ''}{rest}")
    start = getattr(method.node, "lineno", 0)
    end = getattr(method.node, "end_lineno", 0) or 0
    if copy is not None and start <= getattr(copy, "lineno", 0) <= end:
      return copy
  return None
