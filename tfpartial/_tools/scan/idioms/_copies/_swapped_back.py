"""A model's weights swapped for a forward pass and set back: `backup =
model.get_weights()`, a copy with some entries replaced by an old
task's written in (`model.set_weights(current)`), the model run, then
`model.set_weights(backup)` before any step (a hypernetwork's replay
regulariser, an evaluation under other weights). The step never sees
the written values: nothing is kept, no write-back. A write that a step
(of the module's own functions too) runs under before the model is set
back stays a write."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import STEPS

_FITS = {"fit", "fit_generator", "train_on_batch"}
_COPIES = {"copy", "deepcopy", "list"}


def set_back(call: ast.Call, scope: _scopes.Scope,
             analysis: Analysis) -> bool:
  """Whether `call` (`m.set_weights(...)`) is followed, before any step,
  by `m.set_weights(backup)` of a whole copy of `m`'s weights taken
  before it, at the level of `call` or around it."""
  if _names.call_name(call) != "set_weights" or not isinstance(
      call.func, ast.Attribute):
    return False
  receiver = _names.dotted(call.func.value)
  if receiver is None:
    return False
  trains = analysis.once(
      f"swapped_back:{id(analysis.module(scope))}",
      lambda: _training_functions(analysis, scope))
  assert isinstance(trains, set)
  levels = _levels(scope).get(call.lineno, [])
  for _, body, place in sorted(levels, key=lambda level: level[0]):
    for later in body[place + 1:]:
      if _restore(later, receiver, scope, call.lineno) is not None:
        between = body[place:body.index(later)]
        return not any(_steps_in(s, trains) for s in between)
  return False


# The statements holding a line: the lines the statement spans, its
# list, its place there.
_Levels = Dict[int, List[Tuple[int, List[ast.stmt], int]]]


def _levels(scope: _scopes.Scope) -> _Levels:
  """The statements of `scope` holding each line, listed once per scope
  (each write asks)."""
  return scope.once((_levels, 0, 0), lambda: _read_levels(scope))


def _read_levels(scope: _scopes.Scope) -> _Levels:
  levels: _Levels = {}
  for body in _bodies(scope.node):
    for place, each in enumerate(body):
      end = each.end_lineno or each.lineno
      for line in range(each.lineno, end + 1):
        levels.setdefault(line, []).append((end - each.lineno, body, place))
  return levels


def _bodies(node: ast.AST) -> Iterator[List[ast.stmt]]:
  """Every statement list inside `node`."""
  for each in ast.walk(node):
    for field in ("body", "orelse", "finalbody"):
      value = getattr(each, field, None)
      if isinstance(value, list) and value and isinstance(
          value[0], ast.stmt):
        yield value


def _restore(statement: ast.stmt, receiver: str, scope: _scopes.Scope,
             before: int) -> Optional[ast.Call]:
  """`receiver.set_weights(backup)` as `statement`, with `backup` a whole
  copy of `receiver`'s weights taken before line `before` (and none
  taken between it and the statement)."""
  if not isinstance(statement, ast.Expr) or not isinstance(
      statement.value, ast.Call):
    return None
  call = statement.value
  if _names.call_name(call) != "set_weights" or not isinstance(
      call.func, ast.Attribute) or _names.dotted(
          call.func.value) != receiver or len(call.args) != 1 or not (
              isinstance(call.args[0], ast.Name)):
    return None
  name = call.args[0].id
  defs = scope.defs.get(name, [])
  lines = [getattr(d.value, "lineno", 0) for d in defs]
  if not defs or not all(d.part is None and _whole_copy(d.value, receiver)
                         for d in defs) or not any(
                             line < before for line in lines) or any(
                                 before <= line <= call.lineno
                                 for line in lines):
    return None  # A copy taken after the write holds what it wrote.
  if name in _entries_replaced(scope):
    return None  # Entries of the backup replaced: not the model's own.
  return call


def _entries_replaced(scope: _scopes.Scope) -> Set[str]:
  """The names whose entries `scope` replaces (`backup[0] = w`), found
  once per scope."""
  return scope.once((_entries_replaced, 0, 0), lambda: {
      n.value.id for n in ast.walk(scope.node)
      if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
      and isinstance(n.value, ast.Name)})


def _whole_copy(value: Optional[ast.expr], receiver: str) -> bool:
  """`m.get_weights()`, `.copy()` of it, `copy.deepcopy(...)` of it."""
  while isinstance(value, ast.Call) and _names.call_name(value) in _COPIES:
    if isinstance(value.func, ast.Attribute) and not value.args and (
        value.func.attr == "copy"):
      value = value.func.value
    elif len(value.args) == 1:
      value = value.args[0]
    else:
      return False
  return isinstance(value, ast.Call) and _names.call_name(value) == (
      "get_weights") and isinstance(value.func, ast.Attribute) and (
          _names.dotted(value.func.value) == receiver) and not value.args


def _training_functions(analysis: Analysis, scope: _scopes.Scope
                        ) -> Set[str]:
  """The module's functions that call a step or `fit`."""
  tree = analysis.module(scope).tree
  if tree is None:
    return set()
  return {n.name for n in _scopes.walk(tree)
          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
          and any(isinstance(c, ast.Call) and _names.call_name(c) in (
              STEPS | _FITS) for c in _scopes.walk(n))}


def _steps_in(statement: ast.stmt, trains: Set[str]) -> bool:
  """Whether `statement` calls a step, `fit`, or a function that does."""
  return any(isinstance(c, ast.Call) and (
      _names.call_name(c) in STEPS | _FITS or _names.call_name(c) in trains)
             for c in ast.walk(statement))
