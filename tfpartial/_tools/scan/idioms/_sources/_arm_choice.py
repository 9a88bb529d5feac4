"""Where a flag chooses among joins of filtered groups the list a step
trains (`if FLAGS.mode == "depthflow": train = pose + depth + flow`,
`elif FLAGS.mode == "depth": train = pose + depth`, ...): the choice is
the first arm that leaves a group out, not the filter of a group, which
every arm may read. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _flagged


def chosen_arm(var_list: Optional[ast.AST], scope: _scopes.Scope,
               node: ast.expr) -> Optional[ast.expr]:
  """The value of the first arm of a flag's `if` that assigns `var_list`
  fewer of the groups the arms join than another arm does, when the
  filter `node` makes one of those groups; else None."""
  if not isinstance(var_list, ast.Name):
    return None
  arms = [d for d in scope.defs.get(var_list.id, []) if d.replaces]
  if len(arms) < 2 or not all(
      _flagged.a_flag(d.where.test, var_list.id) for d in arms):
    return None
  groups = [_joined(d.value) for d in arms]
  if any(g is None for g in groups) or not any(
      _made_by(scope, name, node) for g in groups for name in g or ()):
    return None
  every = set().union(*(g for g in groups if g is not None))
  for arm, joined in zip(arms, groups):
    if joined is not None and joined < every and any(
        joined < (other or set()) for other in groups):
      return arm.value
  return None


def _joined(value: ast.expr) -> Optional[Set[str]]:
  """The names `a + b + c` joins (a name alone is one), else None."""
  if isinstance(value, ast.Name):
    return {value.id}
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    left, right = _joined(value.left), _joined(value.right)
    return None if left is None or right is None else left | right
  return None


def _made_by(scope: _scopes.Scope, name: str, node: ast.expr) -> bool:
  """Whether `node` lies in a value the scope assigns to `name`."""
  values: List[ast.expr] = [d.value for d in scope.defs.get(name, [])]
  return any(node is each for value in values for each in ast.walk(value))
