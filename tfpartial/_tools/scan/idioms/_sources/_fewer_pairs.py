"""Pairs written out for an apply in one arm of an `if` that are some of
the pairs the other arm applies (`if finetune_all: apply([(g0, w0), ...,
(g9, fc)]) else: apply([(g9, fc)])`): the short arm trains a part."""

from __future__ import annotations

import ast
from typing import FrozenSet, Iterator, List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def fewer_pairs(chosen: ast.AST, scope: _scopes.Scope,
                call: ast.Call) -> bool:
  """Whether `chosen`, the pairs an apply takes written out, names only
  some of the variables an apply in the other arm of an `if` names."""
  if _names.call_name(call) != "apply_gradients":
    return False
  mine = _variables(chosen)
  if not mine:
    return False
  for node in _scopes.walk(scope.node):
    if not isinstance(node, ast.If) or not node.orelse:
      continue
    for arm, other in ((node.body, node.orelse), (node.orelse, node.body)):
      if any(c is call for c in _applies(arm)) and any(
          mine < theirs for theirs in map(
              _variables_of_call, _applies(other)) if theirs):
        return True
  return False


def _applies(body: List[ast.stmt]) -> Iterator[ast.Call]:
  for statement in body:
    for node in ast.walk(statement):
      if isinstance(node, ast.Call) and _names.call_name(
          node) == "apply_gradients":
        yield node


def _variables_of_call(call: ast.Call) -> Optional[FrozenSet[str]]:
  return _variables(call.args[0]) if call.args else None


def _variables(pairs: ast.AST) -> Optional[FrozenSet[str]]:
  """The variables of a list of (gradient, variable) tuples written out,
  as text; None for anything else."""
  if not isinstance(pairs, (ast.List, ast.Tuple)) or not pairs.elts:
    return None
  found = set()
  for pair in pairs.elts:
    if not isinstance(pair, ast.Tuple) or len(pair.elts) != 2:
      return None
    found.add(ast.dump(pair.elts[1]))
  return frozenset(found)
