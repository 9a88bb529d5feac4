"""Whether layers are built beside the scope a filter keeps: a function
opens `with tf.variable_scope('attention'):` around one layer and, in
the same block, outside any scope, builds more layers on its output
(`layer = tf.layers.dense(source_node_prob, 16)`) that a later statement
reads. A step that trains only that scope leaves those layers fixed (an
encoder restored from a checkpoint while an attention layer learns): a
part of the model, not the whole one its root scope would otherwise
name. `_built_outside` reads the same of a model of the project built
before the scope."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _project
from tfpartial._tools.scan._analysis import Analysis

# Functions that build a layer's variables where they are called.
_LAYERS = {"dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose",
           "separable_conv2d", "fully_connected", "get_variable"}


def built_beside(analysis: Analysis, module: _project.Module,
                 kept: Set[str]) -> bool:
  """Whether a block of a function of `module` opens one of the scopes
  `kept` and, outside any scope, binds a name to a layer built there
  that a later statement of the block reads (`opened_beside`, read once
  per module: each step of the module asks)."""
  if module.tree is None or not kept:
    return False
  tree = module.tree
  found = analysis.once(f"layers beside {id(module)}", lambda: (
      opened_beside(tree)))
  assert isinstance(found, set)
  return bool(found & kept)


def opened_beside(tree: ast.AST) -> Set[str]:
  """The scopes a `with` of a block of some function of `tree` opens by
  a literal name, where the block, outside any scope, binds a name to a
  layer built there that a later statement of the block reads."""
  found: Set[str] = set()
  for function in ast.walk(tree):
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      for body in _blocks(function.body):
        if any(_builds(s) and _read_later(s, body[number + 1:])
               for number, s in enumerate(body)):
          found.update(n for s in body if isinstance(s, ast.With)
                       for i in s.items
                       for n in [_opened_scopes.literal(i.context_expr)]
                       if n is not None)
  return found


def _blocks(body: List[ast.stmt]) -> Iterator[List[ast.stmt]]:
  """`body` and the blocks of its statements that open no scope (a
  graph's or a session's `with`, an `if`), not nested functions."""
  yield body
  for statement in body:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef)) or _scoped(statement):
      continue
    for field in ("body", "orelse"):
      inner = getattr(statement, field, None)
      if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
        yield from _blocks(inner)


def _scoped(statement: ast.stmt) -> bool:
  return isinstance(statement, ast.With) and any(
      isinstance(i.context_expr, ast.Call) and _names.call_name(
          i.context_expr) in _names.TF_SCOPES for i in statement.items)


def _builds(statement: ast.stmt) -> bool:
  """`name = tf.layers.dense(...)`: a trainable layer built here."""
  if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
      or not isinstance(statement.targets[0], ast.Name) or not isinstance(
          statement.value, ast.Call):
    return False
  call = statement.value
  return _names.call_name(call) in _LAYERS and not any(
      k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
          k.value.value is False) for k in call.keywords)


def _read_later(statement: ast.stmt, later: List[ast.stmt]) -> bool:
  """Whether a statement of `later` reads the name `statement` binds."""
  name = getattr(statement, "targets")[0].id
  return any(isinstance(n, ast.Name) and n.id == name and isinstance(
      n.ctx, ast.Load) for s in later for n in ast.walk(s))
