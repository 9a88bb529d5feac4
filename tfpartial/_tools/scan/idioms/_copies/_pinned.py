"""A whole variable that a step trains, set back to a number right after
that step in every pass of the training loop (`optimizer.apply_gradients(
zip(grads, params))`, then `params[-1].assign(1.56)`: "keep t0"): the
step moves it and the write undoes the move, so it never changes while
the others train. A hand-made freeze of a whole variable: exact as it
is, the optimizer's work on it wasted.

Not one: a variable set once before the loop (an initial value), a write
of the variable's own value (`assign(tf.clip_by_value(v, 0, 1))`: a
projection), a write under a test inside the loop (a periodic reset), a
variable the step does not train (a learning rate, a counter), zero (an
accumulator cleared)."""

from __future__ import annotations

import ast
from typing import List, Optional, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import var_list_of

# A loop whose body runs once per pass.
_Loop = Union[ast.For, ast.AsyncFor, ast.While]
# The steps whose list names the variables they train.
_STEPS = frozenset({"apply_gradients", "minimize"})


def pinned(call: ast.Call, scope: _scopes.Scope, target: ast.AST,
           value: ast.AST) -> Optional[ast.Call]:
  """The step that trains `target` when `call` sets it back to a number
  after that step in each pass of their loop, else None."""
  if not _number(value):
    return None
  for loop in _loops(scope.node):
    at = next((i for i, s in enumerate(loop.body) if isinstance(
        s, ast.Expr) and s.value is call), None)
    if at is None:
      continue
    for statement in loop.body[:at]:
      for node in ast.walk(statement):
        if isinstance(node, ast.Call) and _names.call_name(node) in _STEPS:
          if _trains(var_list_of(node), target, scope):
            return node
    return None
  return None


def whole_item(scope: _scopes.Scope, target: ast.AST) -> bool:
  """Whether `target` is an item, by a fixed index, of the list of
  variables a step of `scope` trains (`params[-1]` beside
  `apply_gradients(zip(grads, params))`): a whole variable, not a part of
  one."""
  if not isinstance(target, ast.Subscript) or not _fixed(target.slice):
    return False
  # Worked out once per function, as text: a long one holds many writes.
  listed = scope.once((whole_item, 0, 0), lambda: frozenset(
      ast.unparse(chosen) for node in scope.nodes
      if isinstance(node, ast.Call) and _names.call_name(node) in _STEPS
      for chosen in [var_list_of(node)] if chosen is not None))
  assert isinstance(listed, frozenset)
  return ast.unparse(target.value) in listed


def _fixed(index: ast.AST) -> bool:
  """A literal integer index (`0`, `-1`)."""
  if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
    index = index.operand
  return isinstance(index, ast.Constant) and type(index.value) is int


def _number(value: ast.AST) -> bool:
  """A non-zero literal number (`1.56`, `-2`)."""
  if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
    value = value.operand
  return isinstance(value, ast.Constant) and not isinstance(
      value.value, bool) and isinstance(value.value, (int, float)) and (
          value.value != 0)


def _trains(listed: Optional[ast.AST], target: ast.AST,
            scope: _scopes.Scope) -> bool:
  """Whether the step's list `listed` holds `target`: an item of it by a
  fixed index (`params[-1]` of `zip(grads, params)`), or a name the
  literal list writes (in the call, or where its one name is bound)."""
  if listed is None:
    return False
  if isinstance(target, ast.Name) and isinstance(listed, ast.Name):
    defs = scope.defs.get(listed.id, ())
    listed = defs[0].value if len(defs) == 1 and (
        defs[0].part is None) else listed
  if isinstance(target, ast.Subscript):
    return _fixed(target.slice) and (
        ast.unparse(target.value) == ast.unparse(listed))
  return isinstance(target, ast.Name) and isinstance(
      listed, (ast.List, ast.Tuple)) and any(
          isinstance(e, ast.Name) and e.id == target.id for e in listed.elts)


def _loops(node: ast.AST) -> List[_Loop]:
  """The `for` and `while` loops of a function or module, not of the
  functions it defines."""
  found: List[_Loop] = []
  todo = list(ast.iter_child_nodes(node))
  while todo:
    each = todo.pop()
    if isinstance(each, _names.DEFINITIONS + (ast.Lambda,)):
      continue
    if isinstance(each, (ast.For, ast.AsyncFor, ast.While)):
      found.append(each)
    todo.extend(ast.iter_child_nodes(each))
  return found
