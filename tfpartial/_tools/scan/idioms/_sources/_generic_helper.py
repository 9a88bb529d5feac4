"""A helper that keeps the variables whose names hold its parameter
(`get_variables_with_name(name)`: `[v for v in tvars if name in
v.name]`), called with several literal names across the project: the
helper chooses nothing, each caller does, so a step whose list such a
helper filters is shown at the step. Part of `var-list-filter`."""

from __future__ import annotations

import ast
import itertools
from typing import Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow


def at_step(flow: Flow, node: ast.AST, call: ast.Call,
            scope: _scopes.Scope) -> Optional[ast.expr]:
  """`call` (the step, in `scope`) when the filter `node` tests a
  parameter of the function it is written in, which the project calls
  with two literal names or more for it, none in the step's own function
  (there the calls show the choice); else None."""
  home = flow.origin.get(id(node))
  while home is not None and not isinstance(
      home.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    home = home.parent
  if home is None or not isinstance(
      home.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  function = home.node
  read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
  names = [a.arg for a in function.args.args]
  for parameter in read & set(names):
    given: Set[str] = set()
    project = flow.project
    for where, each in itertools.islice(project.calls_named(
        (function.name,), project.all_modules_with((function.name,))), 64):
      if where.node is scope.node:
        return None
      if flow.callee(each, where) is not function:
        continue
      value = _names.argument(each, names, parameter)
      if isinstance(value, ast.Constant) and isinstance(value.value, str):
        given.add(value.value)
    if len(given) > 1:
      return call
  return None
