"""A step's list gathered from parts, each added under its own `if` on
the configuration (`gv = []`, `if 'kp' in finetune: gv += gv_kp`, `if
'ori' in finetune: gv += gv_ori`): the options choose which parts train,
and a part not chosen stays fixed. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple, cast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _train_step

# Tests that ask whether a part is there, not whether it trains.
_PRESENCE = {"hasattr", "isinstance", "len", "callable", "getattr"}


def gathered(chosen: Optional[ast.AST], scope: _scopes.Scope
             ) -> Optional[ast.expr]:
  """The empty list a step's list starts from, when two or more parts of
  it are each added under an `if` of their own and none without one;
  else None. The empty list is the finding's place: the `if`s below it
  show the choice."""
  if not isinstance(chosen, ast.Name) or not isinstance(
      scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  key = (gathered, chosen.id, 0)  # Once per list: each step asks.
  if key not in scope.judged:
    scope.judged[key] = _gathered(chosen.id, scope)
  found = scope.judged[key]
  return found if isinstance(found, ast.expr) else None


def _gathered(name: str, scope: _scopes.Scope) -> Optional[ast.expr]:
  for block, index, empty in _emptied(scope).get(name, []):
    if _chosen_parts(block[index + 1:], name):
      return empty
  return None


# Each name's empty starts: the statement list, the place, the list.
_Emptied = Dict[str, List[Tuple[List[ast.stmt], int, ast.List]]]


def _emptied(scope: _scopes.Scope) -> _Emptied:
  """Where each name of `scope`'s function is set to an empty list (its
  statement list, its place there, the empty list), found once per
  function."""
  key = (_emptied, 0, 0)
  found = scope.judged.get(key)
  if isinstance(found, dict):
    return cast(_Emptied, found)
  emptied: _Emptied = {}
  for block in _blocks(scope):
    for index, statement in enumerate(block):
      if isinstance(statement, ast.Assign) and isinstance(
          statement.value, ast.List) and not statement.value.elts and len(
              statement.targets) == 1 and isinstance(
                  statement.targets[0], ast.Name):
        emptied.setdefault(statement.targets[0].id, []).append(
            (block, index, statement.value))
  scope.judged[key] = emptied
  return emptied


def without_parts(step: _train_step.Step, steps: List[_train_step.Step]
                  ) -> List[_train_step.Step]:
  """`steps` but the gradients a gathered list of `step` adds: parts of
  its training, not other trainings beside it."""
  parts = _parts_of(step.var_list, step.scope)
  return [o for o in steps if id(o.call) not in parts] if parts else steps


def _parts_of(chosen: Optional[ast.AST], scope: _scopes.Scope) -> Set[int]:
  """The calls (by id) whose results a gathered list adds under its
  `if`s: the steps of its parts, not other trainings beside it."""
  if not isinstance(chosen, ast.Name) or gathered(chosen, scope) is None:
    return set()
  key = (_parts_of, chosen.id, 0)  # Once per list: each step asks.
  if not isinstance(scope.judged.get(key), set):
    scope.judged[key] = _added_calls(chosen.id, scope)
  return cast(Set[int], scope.judged[key])


def _added_calls(name: str, scope: _scopes.Scope) -> Set[int]:
  found: Set[int] = set()
  for node in _scopes.walk(scope.node):
    if isinstance(node, ast.If):
      for statement in node.body:
        added = _added(statement, name)
        if isinstance(added, ast.Name):
          found.update(id(d.value) for d in scope.defs.get(added.id, []))
  return found


def _blocks(scope: _scopes.Scope) -> List[List[ast.stmt]]:
  """The statement lists of `scope`'s function, listed once per
  function (its step lists each ask)."""
  key = (_blocks, 0, 0)
  found = scope.judged.get(key)
  if not isinstance(found, list):
    blocks: List[List[ast.stmt]] = []
    found = scope.judged[key] = blocks
    for each in _scopes.walk(scope.node):
      for field in ("body", "orelse", "finalbody"):
        block = getattr(each, field, None)
        if isinstance(block, list) and block and isinstance(
            block[0], ast.stmt):
          blocks.append(block)
  return found


def _chosen_parts(after: List[ast.stmt], name: str) -> bool:
  """Whether two or more different parts are added to `name` in `after`,
  each alone in an `if` on the configuration, and nothing else is."""
  parts: Set[str] = set()
  for statement in after:
    if _added(statement, name) is not None:
      return False  # A part always trained: the rest may be options.
    if not isinstance(statement, ast.If):
      continue
    added = [_added(s, name) for s in statement.body]
    if len(added) != 1 or added[0] is None or statement.orelse or (
        not _configuration_test(statement.test)):
      continue
    parts.add(ast.dump(added[0]))
  return len(parts) >= 2


def _added(statement: ast.stmt, name: str) -> Optional[ast.expr]:
  """What `statement` adds to the list `name` (`+=`, `extend`), if it is
  only that."""
  if isinstance(statement, ast.AugAssign) and isinstance(
      statement.op, ast.Add) and isinstance(
          statement.target, ast.Name) and statement.target.id == name:
    return statement.value
  if isinstance(statement, ast.Expr) and isinstance(
      statement.value, ast.Call) and _names.call_name(
          statement.value) == "extend" and isinstance(
              statement.value.func, ast.Attribute) and isinstance(
                  statement.value.func.value, ast.Name) and (
                      statement.value.func.value.id == name) and len(
                          statement.value.args) == 1:
    return statement.value.args[0]
  return None


def _configuration_test(test: ast.expr) -> bool:
  """A test of an option, not whether a part exists (`is not None`,
  `hasattr`)."""
  for node in ast.walk(test):
    if isinstance(node, ast.Constant) and node.value is None:
      return False
    if isinstance(node, ast.Call) and _names.call_name(node) in _PRESENCE:
      return False
  return True
