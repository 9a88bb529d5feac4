"""Stages run by loops one after another: a function that fetches one
step's op only in one loop (`for epoch in ...: sess.run(optim_gen)`,
the discriminator's op beside it) and another's only in a later loop of
its own (`for epoch in ...: sess.run({'optimizer_enc': optim_enc})`)
trains them in two stages, never together (f-AnoGAN's encoder trained
after its GAN); a GAN's halves alternate inside one loop."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Sequence, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step

_LOOPS = (ast.For, ast.While, ast.AsyncFor)
# The steps that make an op a loop fetches to train.
_OPS = {"minimize", "apply_gradients", "create_train_op"}


def alone_in_stage(step: Step, steps: Sequence[Step]) -> bool:
  """Whether the step's op is fetched only in loops of its function that
  fetch no other train op of it, and the function's other train ops are
  each fetched only in loops of their own: a stage trained alone."""
  mine = _loops_fetching(step)
  others = [other for other in steps if other is not step and (
      other.scope is step.scope) and _names.call_name(other.call) in _OPS]
  if not mine or not others:
    return False
  for other in others:
    theirs = _loops_fetching(other)
    if not theirs or mine & theirs:
      return False
  return True


def _loops_fetching(step: Step) -> Optional[Set[int]]:
  """The outermost loops of the function around each read of the name
  the step's op is kept in, or None when it is kept in none, or read
  outside any loop."""
  function = step.scope.node
  if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  name = _kept_in(step)
  if name is None:
    return None
  outer: Dict[int, int] = {}  # A node -> its outermost loop.
  for statement in function.body:
    _mark(statement, None, outer)
  found: Set[int] = set()
  for node in _scopes.walk(function):
    if isinstance(node, ast.Name) and node.id == name and isinstance(
        node.ctx, ast.Load):
      loop = outer.get(id(node))
      if loop is None:
        return None
      found.add(loop)
  return found or None


def _mark(node: ast.AST, loop: Optional[int], outer: Dict[int, int]) -> None:
  if loop is None and isinstance(node, _LOOPS):
    loop = id(node)
  if loop is not None:
    outer[id(node)] = loop
  for child in ast.iter_child_nodes(node):
    _mark(child, loop, outer)


def _kept_in(step: Step) -> Optional[str]:
  """The local name the step's op is assigned to, once."""
  names = [n.targets[0].id for n in step.scope.nodes if isinstance(
      n, ast.Assign) and len(n.targets) == 1 and isinstance(
          n.targets[0], ast.Name) and any(
              c is step.call for c in _scopes.walk(n.value))]
  if len(names) != 1 or len(step.scope.defs.get(names[0], [])) != 1:
    return None
  return names[0]
