"""A net between a stage's own net and its loss: the step trains a new
part (learned noise shifts under `variable_scope('Offset')`) whose output
another part, trained only in other runs, turns into what the loss reads
(`self.net(inputs, shift)`). The other part is on the step's loss path
and gets no update in that run. A teacher reads the data, not the
step's output; a perceptual network has no step of its own."""

from __future__ import annotations

import ast
from typing import Callable, Iterable, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _stage_values


def made_in(functions: List[ast.AST], scopes: Set[str]) -> Set[str]:
  """The names the blocks of `scopes` assign in `functions` (`shift` of
  `with tf.variable_scope('Offset'): shift = ...`)."""
  return {name for function in functions
          for block in _stage_values.scopes_built(function)
          if block.scope in scopes
          for name in _stage_values.names_assigned(block.node)}


def opens(callee: ast.AST, scopes: Set[str]) -> bool:
  """Whether a function opens a computed scope one of `scopes` starts
  with (`variable_scope(self.name)` for `self.name + '/Level1'`)."""
  wanted = {text.split(" + ")[0] for text in scopes if text.startswith("=")}
  return bool(wanted) and any(
      isinstance(n, ast.Call) and _names.call_name(n) in _names.TF_SCOPES and n.args
      and not isinstance(n.args[0], ast.Constant)
      and f"={ast.unparse(n.args[0])}" in wanted
      for n in _scopes.walk(callee))


def between(calls: Iterable[ast.AST], runs_other: Callable[[ast.Call], bool],
            fed: Callable[[List[ast.expr]], Iterable[ast.AST]],
            mine: Set[str]) -> bool:
  """Whether a call the loss is computed from runs the other part on
  what the step's own part made (one of the names `mine`)."""
  if not mine:
    return False
  for call in calls:
    if isinstance(call, ast.Call) and runs_other(call):
      given = [*call.args, *(k.value for k in call.keywords)]
      if any(isinstance(n, ast.Name) and n.id in mine for n in fed(given)):
        return True
  return False
