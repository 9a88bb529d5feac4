"""Whether a filter keeps the variable scope in effect where its function
runs: `scope = tf.get_variable_scope()` read outside any scope the
function opens, then `tf.get_collection(..., scope=scope.name)` after
the function builds its model and loss. Every variable the function
makes lies under that scope (scopes only nest), and when no caller in
the project calls the function inside a variable scope, the scope in
effect is the root: the collection is every variable. A read inside a
scope the function opens (`with tf.variable_scope('head'):`), or a
function a caller calls inside one, stays a candidate. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._project import Project
from tfpartial._tools.scan.idioms._wholes._caller_scope import (
    _scopes_around)

_COLLECTING = frozenset({"get_collection", "trainable_variables",
                         "global_variables"})


def in_effect(project: Project, node: ast.AST, home: _scopes.Scope) -> bool:
  """Whether `node` (a filter in `home`) collects the scope in effect
  where its function runs, the root for every caller in the project.

  >>> read = ast.parse("tf.get_variable_scope().name").body[0]
  >>> _read_scope(read.value) is not None
  True
  """
  function = home.node
  if not isinstance(node, ast.Call) or _names.call_name(
      node) not in _COLLECTING or not isinstance(
          function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  given = [k.value for k in node.keywords if k.arg == "scope"] + (
      node.args[1:2] if _names.call_name(node) == "get_collection" else
      node.args[:1])
  if len(given) != 1:
    return False
  read = _read_scope(given[0], home)
  if read is None or _scopes_around(home, read):
    return False  # Read inside a scope the function opens.
  name = function.name
  if name == "__init__":
    if home.cls is None:
      return False
    name = home.cls.name
  return not any(_scopes_around(scope, call) for scope, call in (
      project.calls_named((name,), project.all_modules_with((name,)))))


def _read_scope(value: ast.expr, home: Optional[_scopes.Scope] = None
                ) -> Optional[ast.Call]:
  """The `tf.get_variable_scope()` call whose name `value` is
  (`tf.get_variable_scope().name`, or `scope.name` of a name bound once
  to that call in `home`), or None."""
  if not isinstance(value, ast.Attribute) or value.attr not in {
      "name", "original_name_scope"}:
    return None
  base = value.value
  if isinstance(base, ast.Name) and home is not None:
    defs = home.defs.get(base.id, [])
    base = defs[0].value if len(defs) == 1 and defs[0].value is not None \
        else base
  if isinstance(base, ast.Call) and _names.call_name(
      base) == "get_variable_scope" and not base.args:
    return base
  return None
