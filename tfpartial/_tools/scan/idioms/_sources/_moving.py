"""The property of a model's own class that a list dropping only moving
statistics (`_statistics`) is often read through.

`[v for v in variables if 'moving' not in v.name]` leaves out batch
norm's moving mean and variance, which no optimizer trains anyway: the
list is what it was given, and whatever chose that list (a helper that
keeps only the batch norm variables of a pretrained base) is the
filter."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._project import Project


def property_read(project: Project, value: ast.AST, scope: _scopes.Scope
                  ) -> Optional[_scopes.Scope]:
  """The method of the step's own class a read of `self.X` runs, when X
  is a property the class defines (a Keras model overriding `variables`
  with the list it trains), else None."""
  name = _names.dotted(value) if isinstance(value, ast.Attribute) else None
  if name is None or name.count(".") != 1 or not name.startswith("self."):
    return None
  info = _scopes.enclosing_class(scope)
  if info is None:
    return None
  method = project.method(info, name.split(".")[1])
  node = method.node if method is not None else None
  if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not (
      any(_names.dotted(d) == "property" for d in node.decorator_list)):
    return None
  return method
