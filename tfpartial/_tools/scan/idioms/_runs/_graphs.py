"""Where a script starts a new graph: `tf.reset_default_graph()` as a
statement of its own, or a call of a function of its module that runs it
(a book's `reset_graph()` before each exercise, each notebook cell).
What is built after it is another model: two train steps on either side
of it are not one model's two halves, nor one filter written twice, and
the variables made before the last reset, or after the next one, are not
variables a step between them could train or leave out.
"""

from __future__ import annotations

import ast
import bisect
from typing import List, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

_RESET = "reset_default_graph"
Position = Tuple[int, int]


def resets(scope: _scopes.Scope) -> List[Position]:
  """Where `scope`'s own statements start a new graph, in order (none in
  most code: one graph), worked out once per scope."""
  module = scope.module
  if not isinstance(module, _project.Module) or (
      _RESET not in module.source.text):
    return []
  return scope.once((resets, 0, 0), lambda: _resets(scope))


def section(scope: _scopes.Scope, node: ast.AST) -> int:
  """How many new graphs `scope` starts before `node`."""
  position = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
  return bisect.bisect_left(resets(scope), position)


def same_graph(at: Position, other: Position, starts: List[Position]
               ) -> bool:
  """Whether nothing in `starts` (where graphs are reset) lies between
  the positions `at` and `other`."""
  low, high = min(at, other), max(at, other)
  return not any(low < start < high for start in starts)


def _resets(scope: _scopes.Scope) -> List[Position]:
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
