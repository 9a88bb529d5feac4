"""Whether a model is built outside the scope a filter keeps: a function
opens `with tf.variable_scope("text_objseg"):` around the network it adds
and trains, but builds the pretrained backbone before it, outside that
scope, and reads the backbone's outputs (`resnet = DeepLabResNetModel(
...)`; `self.feat = resnet.layers['res5c']`). A step that trains only
that scope leaves the backbone fixed: a part of the model, not the whole
one its root scope would otherwise name. The same of a backbone built in
a sibling scope of any module (`_beside_sibling`)."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Set

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
  if _beside_sibling(analysis, kept, tree):
    return True
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


def _beside_sibling(analysis: Analysis, kept: Set[str], home: ast.AST
                    ) -> bool:
  """Whether a function of the project opens one of the scopes `kept`
  after a sibling scope (`with tf.variable_scope("Feature_Extractor"):`
  then `with tf.variable_scope("Head"):`) in which it builds a model of
  the project whose result the kept scope's block reads: the backbone
  beside the head, left fixed by a step that trains only the head. Not
  a sibling the step's module names otherwise (a GAN's other half, a
  filter keeping both scopes)."""
  named: Optional[Set[str]] = None
  for module in analysis.project.modules:
    text = module.source.text
    top = analysis.project.parsed(module) if "_scope(" in text and any(
        k in text for k in kept) else None
    if top is None or module.tree is None:
      continue
    named = _named(home) if named is None else named
    for function in ast.walk(module.tree):
      if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
          _sibling_read(analysis, top, function.body, kept, named)):
        return True
  return False


def _sibling_read(analysis: Analysis, top: _scopes.Scope,
                  body: List[ast.stmt], kept: Set[str], named: Set[str]
                  ) -> bool:
  """Whether a statement of `body` opens a scope of `kept` and reads a
  name an earlier scope of `body`, not kept, binds to a model built."""
  for index, statement in enumerate(body):
    if not opens(statement, kept):
      continue
    read = {_names.dotted(n) for n in ast.walk(statement)
            if isinstance(n, (ast.Name, ast.Attribute))}
    for earlier in body[:index]:
      if isinstance(earlier, ast.With) and not opens(
          earlier, kept | named) and opens(earlier, {_opened(earlier)}) and any(
              _builds(analysis, top, s) and (
                  getattr(s, "targets")[0].id in read)
              for s in earlier.body):
        return True
  return False


def _opened(statement: ast.With) -> str:
  """The literal name the first item of a `with` opens, or ''."""
  expr = statement.items[0].context_expr
  args = getattr(expr, "args", None)
  return args[0].value if args and isinstance(args[0], ast.Constant) and (
      isinstance(args[0].value, str)) else ""


def _named(tree: ast.AST) -> Set[str]:
  """The root scopes a module's strings name, but for the scopes its
  `with` statements open."""
  opened = {id(getattr(i.context_expr, "args")[0]) for n in ast.walk(tree)
            if isinstance(n, ast.With) for i in n.items
            if getattr(i.context_expr, "args", None)}
  return {n.value.strip("/").split("/")[0] for n in ast.walk(tree)
          if isinstance(n, ast.Constant) and isinstance(n.value, str)
          and id(n) not in opened}
