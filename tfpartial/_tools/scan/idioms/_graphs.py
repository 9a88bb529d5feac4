"""Where a script starts a new graph: `tf.reset_default_graph()` as a
statement of its own, or a call of a function of its module that runs
it (a book's `reset_graph()` before each exercise). What is built after
it is another model: two train steps on either side of it are not one
model's two halves, nor one filter written twice."""

from __future__ import annotations

import ast
import bisect
from typing import List, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

_RESET = "reset_default_graph"


def section(analysis: Analysis, scope: _scopes.Scope, node: ast.AST
            ) -> int:
  """How many new graphs `scope` starts before `node` (0 in most code:
  one graph)."""
  if _RESET not in analysis.module(scope).source.text:
    return 0
  key = (section, 0, 0)
  resets = scope.judged.get(key)
  if not isinstance(resets, list):
    resets = scope.judged[key] = _resets(scope)
  position = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
  return bisect.bisect_left(resets, position)


def _resets(scope: _scopes.Scope) -> List[Tuple[int, int]]:
  """Where `scope`'s own statements start a new graph, in order."""
  root = scope
  while root.parent is not None:
    root = root.parent
  resetting: Set[str] = {
      name for name, function in root.functions.items()
      if any(isinstance(n, ast.Call) and _names.call_name(n) == _RESET
             for n in ast.walk(function))}
  return sorted(
      (node.lineno, node.col_offset) for node in scope.nodes
      if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
      and (_names.call_name(node.value) == _RESET or isinstance(
          node.value.func, ast.Name) and node.value.func.id in resetting))
