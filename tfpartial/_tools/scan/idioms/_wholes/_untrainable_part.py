"""Whether a part of a model class (`self.encoder`) is frozen whole where
its own class is written: `self.trainable = False` in a method of the
part's class, or every network its `call` runs made `trainable=False`
(`self.model = tf.keras.Model(vgg.input, outputs, trainable=False)`, a
pretrained VGG kept as a fixed feature extractor and loss network). A
step that leaves such a part out of its list leaves nothing out that
would train. Part of `var-list-filter` (`_part_of_self`)."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes


def frozen_whole(project: _project.Project, info: _scopes.ClassInfo,
                 part: str) -> bool:
  """Whether every class `self.part` of `info` is made from sets itself,
  or all that its `call` runs, untrainable."""
  classes = _classes(project, info, part)
  return bool(classes) and all(_untrainable(c) for c in classes)


def _classes(project: _project.Project, info: _scopes.ClassInfo,
             part: str) -> List[_scopes.ClassInfo]:
  """The project's classes `self.part` is made from, or [] where one of
  its values is not such a class."""
  found: List[_scopes.ClassInfo] = []
  for value, scope in project.attribute(info, f"self.{part}"):
    name = _names.dotted(value.func) if isinstance(value, ast.Call) else None
    target = project.resolve(scope, name) if name else None
    if not isinstance(target, _scopes.ClassInfo):
      return []
    found.append(target)
  return found


def _untrainable(info: _scopes.ClassInfo) -> bool:
  """Whether the class sets `self.trainable = False`, or its `call` runs
  only members made with `trainable=False` or set so."""
  frozen: Set[str] = set()
  for method in info.methods.values():
    for node in _scopes.walk(method.node):
      if not isinstance(node, ast.Assign):
        continue
      for target in node.targets:
        name = _names.dotted(target) or ""
        if name == "self.trainable" and _false(node.value):
          return True
        if name.startswith("self.") and name.endswith(".trainable") and (
            _false(node.value)):
          frozen.add(name[:-len(".trainable")])
        elif name.startswith("self.") and _made_frozen(node.value):
          frozen.add(name)
  called = _called(info)
  return bool(called) and called <= frozen


def _called(info: _scopes.ClassInfo) -> Set[str]:
  """The `self.` members the class's `call` calls."""
  method = info.methods.get("call")
  if method is None:
    return set()
  return {_names.dotted(n.func) or "" for n in _scopes.walk(method.node)
          if isinstance(n, ast.Call) and (_names.dotted(
              n.func) or "").startswith("self.")}


def _made_frozen(value: ast.AST) -> bool:
  return isinstance(value, ast.Call) and any(
      k.arg == "trainable" and _false(k.value) for k in value.keywords)


def _false(node: Optional[ast.AST]) -> bool:
  return isinstance(node, ast.Constant) and node.value is False
