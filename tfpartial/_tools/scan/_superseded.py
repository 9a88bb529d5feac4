"""Which assignments of a `self.` attribute reach a read in the same
method: one that a later assignment in straight-line code (the method's
body, `with` blocks) replaces before the read does not. `self.vars =
get_collection(..., "encoder")` then `grads, self.vars = zip(*opt.
compute_gradients(loss))` hands the step every variable, not the
encoder's."""

from __future__ import annotations

import ast
from typing import Iterator, List, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def reaching(values: List[Tuple[ast.expr, _scopes.Scope]], name: str,
             node: ast.AST, scope: _scopes.Scope
             ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """`values` (the assignments of the attribute `name`, `self.x`, with
  where) less those made in `scope` that an assignment of the whole
  attribute (not of an element) in its straight-line code replaces
  before `node` reads the attribute there."""
  line = getattr(node, "lineno", None)
  if line is None or not isinstance(scope.node, (
      ast.FunctionDef, ast.AsyncFunctionDef)):
    return values
  here = [v for v, home in values if home is scope]
  last = 0
  for statement in _straight(scope.node.body):
    end = statement.end_lineno or statement.lineno
    if isinstance(statement, ast.Assign) and end < line and any(
        _names.dotted(t) == name for target in statement.targets
        for t in _elements(target)) and any(
        statement.lineno <= getattr(v, "lineno", 0) <= end for v in here):
      last = max(last, statement.lineno)
  if not last:
    return values
  return [(v, home) for v, home in values
          if home is not scope or getattr(v, "lineno", 0) >= last]


def _straight(body: List[ast.stmt]) -> Iterator[ast.stmt]:
  """The statements that run, in order, whenever the body runs."""
  for statement in body:
    yield statement
    if isinstance(statement, (ast.With, ast.AsyncWith)):
      yield from _straight(statement.body)


def _elements(target: ast.expr) -> Iterator[ast.expr]:
  """A target and, for a tuple or list, each of its elements."""
  yield target
  if isinstance(target, (ast.Tuple, ast.List)):
    for element in target.elts:
      yield from _elements(element)
