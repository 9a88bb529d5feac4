"""The graph a statement of a script builds into: a script or a notebook
that calls `tf.reset_default_graph()` (itself, or through its own helper,
`reset_graph()`) builds each cell's model in a graph of its own, so the
variables made before the last reset, or after the next one, are not
variables a step between them could train or leave out.
"""

from __future__ import annotations

import ast
import weakref
from typing import List, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms import _idiom

_RESET = "reset_default_graph"
Position = Tuple[int, int]
# Each scope's resets, worked out once (and gone with the scope).
_FOUND: "weakref.WeakKeyDictionary[_scopes.Scope, List[Position]]" = (
    weakref.WeakKeyDictionary())


def resets(flow: Flow, home: _scopes.Scope) -> List[Position]:
  """Where `home` starts a new default graph, in order."""
  found = _FOUND.get(home)
  words = getattr(home.module, "words", None)
  if found is None and words is not None and not any(
      "reset" in w for w in words):
    found = []  # Nothing in the module resets a graph: one graph.
  if found is None:
    found = sorted(_idiom.position(n) for n in home.nodes if isinstance(
        n, ast.Call) and _resets(flow, n, home))
    _FOUND[home] = found
  return found


def same_graph(at: Position, other: Position, starts: List[Position]
               ) -> bool:
  """Whether nothing in `starts` (where graphs are reset) lies between
  the positions `at` and `other`."""
  low, high = min(at, other), max(at, other)
  return not any(low < start < high for start in starts)


def _resets(flow: Flow, call: ast.Call, home: _scopes.Scope) -> bool:
  """`tf.reset_default_graph()`, or a call of the project's function that
  makes one (`reset_graph()` of `def reset_graph(seed=42)`)."""
  name = _names.call_name(call)
  if name == _RESET:
    return True
  if not isinstance(call.func, ast.Name):
    return False
  callee = flow.callee(call, home)
  return isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
      isinstance(n, ast.Call) and _names.call_name(n) == _RESET
      for n in ast.walk(callee))
