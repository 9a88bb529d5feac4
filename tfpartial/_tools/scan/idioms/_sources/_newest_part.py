"""The newest part of a model a loop grows, as a step's list.

`for k in range(n): block = Block(); model.add_block(block)`, then in
the same loop `tape.gradient(loss, block.trainable_variables)` where the
loss runs `model(x)`: each stage trains the part it adds, the parts of
the stages before run in the loss and stay as they are (greedy,
stage-wise training). Where a step of the function also trains the
model's own list (the stages fine-tuned together) nothing is left out.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _model_parts
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, var_list_of)

_LISTS = {"trainable_variables", "trainable_weights", "variables",
          "weights"}


def newest(chosen: Optional[ast.AST], scope: _scopes.Scope
           ) -> Optional[ast.expr]:
  """`part.trainable_variables` (a step's list `chosen`) of a part the
  loop around the step makes and hands to a model the function runs,
  whose own list no step of the function trains; else None."""
  if not isinstance(chosen, ast.Attribute) or chosen.attr not in _LISTS or (
      not isinstance(chosen.value, ast.Name)):
    return None
  part = chosen.value.id
  for each in scope.defs.get(part, ()):
    loop = _loop_of(each.where.loops, scope)
    if loop is None or not _model_parts.constructed(each.value) or not any(
        n is chosen for n in ast.walk(loop)):
      continue
    for model in _given_to(loop, part):
      if _model_parts.called(model, scope) and not _trained_whole(
          model, scope):
        return chosen
  return None


def _loop_of(loops: Tuple[int, ...], scope: _scopes.Scope) -> Optional[ast.AST]:
  """The innermost loop of `loops` (ids) in the function."""
  found = [n for n in scope.nodes if isinstance(n, (ast.For, ast.While))
           and id(n) in loops]
  return found[-1] if found else None


def _given_to(loop: ast.AST, part: str) -> List[str]:
  """The names whose method the loop hands `part` to
  (`model.add_module(part)`)."""
  return [n.func.value.id for n in ast.walk(loop) if isinstance(
      n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(
          n.func.value, ast.Name) and any(
              isinstance(a, ast.Name) and a.id == part for a in n.args)]


def _trained_whole(model: str, scope: _scopes.Scope) -> bool:
  """Whether a step of the function trains the model's own list."""
  for node in scope.nodes:
    if isinstance(node, ast.Call) and _names.call_name(node) in STEPS:
      chosen = var_list_of(node)
      if chosen is not None and any(isinstance(n, ast.Name) and (
          n.id == model) for n in ast.walk(chosen)):
        return True
  return False
