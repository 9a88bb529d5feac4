"""Filters that only drop a layer's moving statistics, and the property
of a model's own class that such a list is often read through.

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

# The words a name test of moving statistics starts with.
_WORDS = ("moving", "ema", "exponentialmovingaverage")


def _statistics_only(test: ast.expr) -> bool:
  """Whether a test only drops names of moving statistics (`'moving'
  not in x.name`)."""
  compares = [n for n in ast.walk(test) if isinstance(n, ast.Compare)]
  if not compares or not isinstance(test, ast.Compare):
    return False
  texts = [side.value for side in [test.left, *test.comparators]
           if isinstance(side, ast.Constant) and isinstance(side.value, str)]
  return len(compares) == 1 and bool(texts) and all(
      isinstance(op, ast.NotIn) for op in test.ops) and all(
          text.lower().startswith(_WORDS) for text in texts)


def looked_through(expr: ast.AST) -> Optional[ast.expr]:
  """What a comprehension that only drops moving statistics keeps from
  (its one source), or None for any other expression."""
  if not isinstance(expr, (ast.ListComp, ast.GeneratorExp)) or len(
      expr.generators) != 1:
    return None
  generator = expr.generators[0]
  if not generator.ifs or not all(_statistics_only(t) for t in generator.ifs):
    return None
  return generator.iter


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
