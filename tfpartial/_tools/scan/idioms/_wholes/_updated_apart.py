"""Whether the variables a function makes and its step leaves out are
updated by the loop that runs the step, by a rule of the program's own:
an alternating fit (`Q = tf.Variable(G)`, `d = tf.Variable(...)`; each
pass a gradient step on `[Q]`, then `d = closed_form(Q)` or
`d.assign(...)`). The rest is solved, not frozen: the step leaves out
nothing that stays as it was. A variable left out that the loop never
writes is still left out. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# The calls that write a variable in place.
_WRITES = {"assign", "assign_add", "assign_sub"}


def rest_updated(chosen: Optional[ast.AST], scope: _scopes.Scope,
                 call: ast.AST) -> bool:
  """Whether `chosen`, the list of the step `call`, names variables the
  function makes (`[Q]`), and each other variable it makes is rebound or
  written inside the loop that runs the step."""
  kept = _listed(chosen, scope)
  if not kept:  # Before any walk: most lists are no literal of names.
    return False
  made = {name for name, defs in scope.defs.items() if any(
      _made(d.value) for d in defs)}
  loop = _loop_of(scope, call) if kept <= made else None
  if loop is None:
    return False
  rest = made - kept
  return bool(rest) and all(_written_in(loop, name) for name in rest)


def _listed(chosen: Optional[ast.AST], scope: _scopes.Scope) -> Set[str]:
  """The local names a literal list (or a name bound once to one) holds."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else None
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not all(
      isinstance(e, ast.Name) for e in chosen.elts):
    return set()
  return {e.id for e in chosen.elts if isinstance(e, ast.Name)}


def _made(value: ast.AST) -> bool:
  return isinstance(value, ast.Call) and _names.call_name(value) == "Variable"


def _loop_of(scope: _scopes.Scope, call: ast.AST) -> Optional[ast.AST]:
  """The innermost loop of the function around `call`."""
  loops: List[ast.AST] = [n for n in scope.nodes if isinstance(
      n, (ast.For, ast.While)) and any(s is call for s in ast.walk(n))]
  return min(loops, key=lambda n: len(list(ast.walk(n))), default=None)


def _written_in(loop: ast.AST, name: str) -> bool:
  """Whether the loop rebinds `name` or writes it in place."""
  for node in ast.walk(loop):
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in node.targets) and (
            not _made(node.value)):
      return True
    if isinstance(node, ast.Call) and _names.call_name(
        node) in _WRITES and isinstance(node.func, ast.Attribute) and (
            _names.dotted(node.func.value) == name):
      return True
  return False
