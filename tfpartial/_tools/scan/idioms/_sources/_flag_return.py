"""A function that returns a filter under a flag's `if` and every
variable otherwise (`if cfg.residual_training: return
tf.trainable_variables('confidence')`, then `return
tf.trainable_variables()`): the flag chooses the filter against the whole
list, as `part if flag else every` does, even where the filter names a
scope the project opens around a model of its own. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._sources import _flagged


def against_every(flow: Flow, node: Optional[ast.AST]) -> bool:
  """Whether `node` is the value a function returns inside an `if` on a
  flag while a `return` outside that `if` returns every variable."""
  home = flow.origin.get(id(node)) if node is not None else None
  while home is not None and not isinstance(
      home.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    home = home.parent
  if home is None:
    return False
  for test in _scopes.walk(home.node):
    if not isinstance(test, ast.If) or not _flagged.a_flag(test.test):
      continue
    inside = [r for s in test.body for r in ast.walk(s)
              if isinstance(r, ast.Return)]
    if not any(r.value is node for r in inside):
      continue
    return any(isinstance(r, ast.Return) and r not in inside and (
        r.value is not None) and _every(flow, r.value, home)
               for r in _scopes.walk(home.node))
  return False


def _every(flow: Flow, value: ast.expr, home: _scopes.Scope) -> bool:
  labels = flow.labels(value, home)
  return "var" in labels and "filtered" not in labels
