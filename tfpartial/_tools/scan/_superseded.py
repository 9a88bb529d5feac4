"""Which assignments of a `self.` attribute reach a read in the same
method: one that a later assignment in straight-line code (the method's
body, `with` blocks) replaces before the read does not. `self.vars =
get_collection(..., "encoder")` then `grads, self.vars = zip(*opt.
compute_gradients(loss))` hands the step every variable, not the
encoder's."""

from __future__ import annotations

import ast
import weakref
from typing import Dict, Iterator, List, Tuple

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
  for start, end in _whole_assignments(scope.node, name):
    if end < line and any(
        start <= getattr(v, "lineno", 0) <= end for v in here):
      last = max(last, start)
  if not last:
    return values
  return [(v, home) for v, home in values
          if home is not scope or getattr(v, "lineno", 0) >= last]


def _whole_assignments(function: ast.AST, name: str) -> List[Tuple[int, int]]:
  """(first line, last line) of each statement of `function`'s
  straight-line code assigning the whole attribute `name`, found once per
  function: each read of `self.x` in it asks again."""
  kept = _ASSIGNED.get(function)
  if kept is None:
    kept = _ASSIGNED[function] = {}
    for statement in _straight(getattr(function, "body")):
      if isinstance(statement, ast.Assign):
        for target in statement.targets:
          for each in {_names.dotted(t) for t in _elements(target)}:
            kept.setdefault(each or "", []).append(
                (statement.lineno, statement.end_lineno or statement.lineno))
  return kept.get(name, [])


# Per function, by attribute (weakly: a scan's trees go when it ends).
_ASSIGNED: weakref.WeakKeyDictionary[ast.AST, Dict[str, List[Tuple[
    int, int]]]] = weakref.WeakKeyDictionary()


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
