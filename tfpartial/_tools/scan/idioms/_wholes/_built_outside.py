"""Whether a model is built outside the scope a filter keeps: a function
opens `with tf.variable_scope("text_objseg"):` around the network it adds
and trains, but builds the pretrained backbone before it, outside that
scope, and reads the backbone's outputs (`resnet = DeepLabResNetModel(
...)`; `self.feat = resnet.layers['res5c']`). A step that trains only
that scope leaves the backbone fixed: a part of the model, not the whole
one its root scope would otherwise name."""

from __future__ import annotations

import ast
from typing import Iterator, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis


def built_outside(analysis: Analysis, kept: Set[str],
                  home: _scopes.Scope) -> bool:
  """Whether a function of `home`'s module opens one of the scopes
  `kept` after building, outside any scope, a model of the project (a
  class or function that creates trainable variables) whose result a
  later statement of the function reads."""
  module = analysis.module(home)
  tree = module.tree
  top = analysis.project.parsed(module)
  if tree is None or top is None or not kept:
    return False
  for function in ast.walk(tree):
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      continue
    body = function.body
    for index, statement in enumerate(body):
      if opens(statement, kept) and any(
          _builds(analysis, top, s) and _read_later(s, body[number + 1:])
          for number, s in enumerate(body[:index])):
        return True
  return False


def opens(statement: ast.stmt, kept: Set[str]) -> bool:
  """`with tf.variable_scope("name"):` for a name of `kept`."""
  return isinstance(statement, ast.With) and any(
      isinstance(i.context_expr, ast.Call) and _names.call_name(
          i.context_expr) in _names.TF_SCOPES and i.context_expr.args and isinstance(
              i.context_expr.args[0], ast.Constant) and (
                  i.context_expr.args[0].value in kept)
      for i in statement.items)


def _builds(analysis: Analysis, top: _scopes.Scope, statement: ast.stmt
            ) -> bool:
  """`name = Model(...)` for a model of the project."""
  if not isinstance(statement, ast.Assign) or not isinstance(
      statement.value, ast.Call) or len(statement.targets) != 1 or (
          not isinstance(statement.targets[0], ast.Name)):
    return False
  dotted = _names.dotted(statement.value.func)
  target = analysis.project.resolve(top, dotted) if dotted else None
  if isinstance(target, _scopes.ClassInfo):
    classes = [target, *analysis.project.base_classes(target)]
    return any(_creates(m.node) for c in classes
               for m in c.methods.values())
  return isinstance(target, tuple) and _creates(target[0])


def _creates(function: ast.AST) -> bool:
  """Whether `function` itself creates a variable that is not set
  untrainable by a literal."""
  return any(_names.call_name(c) in _names.VARIABLES and not any(
      k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
          k.value.value is False) for k in c.keywords)
             for c in _calls(function))


def _calls(function: ast.AST) -> Iterator[ast.Call]:
  return (n for n in ast.walk(function) if isinstance(n, ast.Call))


def _read_later(statement: ast.stmt, later: List[ast.stmt]) -> bool:
  """Whether a statement of `later` reads the name `statement` binds."""
  name = getattr(statement, "targets")[0].id
  return any(isinstance(n, ast.Name) and n.id == name and isinstance(
      n.ctx, ast.Load) for s in later for n in ast.walk(s))
