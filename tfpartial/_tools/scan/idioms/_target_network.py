"""Whether a blend written into variables is a target network's soft
update: `assign(t, (1 - tau) * t + tau * s)` for `t, s` in `zip(targets,
sources)`, where `sources` is the list a train op trains and `targets` is
not. The target follows the trained network whole (SAC's, DDPG's, DQN's
target ops): no element of a trained variable is put back."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# The calls a list of trained variables is passed to, and the position
# of that list among their arguments (`var_list` by keyword anywhere).
_TRAIN_CALLS = {"minimize": 2, "compute_gradients": 1, "gradients": 1,
                "gradient": 1}


def follows_trained(scope: _scopes.Scope, analysis: Analysis,
                    target: ast.AST, value: ast.AST) -> bool:
  """Whether `value`, a sum written into `target`, blends in an element
  of a list the module trains, zipped with a list of targets the module
  does not train."""
  if not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Add):
    return False
  written = _list_of(target, scope)
  if written is None:
    return False
  module = analysis.module(scope)
  memo = analysis.once("target-network:trained", dict)
  assert isinstance(memo, dict)
  if id(module) not in memo:
    memo[id(module)] = _trained_lists(module.tree)
  trained: FrozenSet[str] = memo[id(module)]
  mine = _names.dotted(target)
  sources = {_list_of(n, scope) for n in ast.walk(value) if isinstance(
      n, ast.Name) and n.id != mine}
  return written not in trained and any(
      s in trained for s in sources if s is not None and s != written)


def _list_of(element: ast.AST, scope: _scopes.Scope) -> Optional[str]:
  """The dotted name of the list a loop's element comes from (`self.
  params` of `s` in `for t, s in zip(targets, sources)`, `sources =
  self.params`), following a few plain assignments."""
  if not isinstance(element, ast.Name):
    return None
  node: Optional[ast.expr] = scope.loops.get(element.id)
  for _ in range(3):
    if not isinstance(node, ast.Name):
      break
    defs = scope.defs.get(node.id, [])
    if len(defs) != 1 or defs[0].part is not None:
      break
    node = defs[0].value
  return _names.dotted(node) if node is not None else None


def _trained_lists(tree: Optional[ast.AST]) -> FrozenSet[str]:
  """The dotted names of the lists passed to a train call in `tree`."""
  found: Set[str] = set()
  for node in ast.walk(tree) if tree is not None else ():
    if not isinstance(node, ast.Call):
      continue
    name = _names.call_name(node)
    listed: Dict[str, ast.expr] = {
        k.arg: k.value for k in node.keywords if k.arg == "var_list"}
    if name in _TRAIN_CALLS and len(node.args) > _TRAIN_CALLS[name]:
      listed["arg"] = node.args[_TRAIN_CALLS[name]]
    found.update(n for n in map(_names.dotted, listed.values()) if n)
  return frozenset(found)
