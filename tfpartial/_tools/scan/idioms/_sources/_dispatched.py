"""The other methods a call on an object may run: `model =
builder.build(config)` returns one of several classes of the project,
and `model.get_variables_to_train()` runs the method of whichever was
built, while the flow follows one of them. The overrides of that method
across the classes deriving from the base that declares it are the
functions whose result the step may train. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis


def overrides(analysis: Analysis, value: ast.AST, scope: _scopes.Scope
              ) -> List[_scopes.Scope]:
  """The methods of the name `value` (`obj.m()`, `obj` not `self`) calls
  in the classes the project builds that share the base declaring the
  method the flow follows, that one left out."""
  if not isinstance(value, ast.Call) or not isinstance(
      value.func, ast.Attribute) or isinstance(
          value.func.value, ast.Name) and value.func.value.id == "self":
    return []
  flow = analysis.flow
  callee = flow.callee(value, scope)
  owner = flow.bound_self.get(id(callee)) if callee is not None else None
  info = flow.classes.get(id(owner)) if owner is not None else None
  if info is None:
    return []
  name = value.func.attr
  declaring = [each for each in (info, *analysis.project.base_classes(info))
               if name in each.methods]
  if not declaring:
    return []
  found: List[_scopes.Scope] = []
  for each in (declaring[-1].methods[name], *analysis.project.overriding(
      declaring[-1], name)):
    if each.node is not callee and each not in found and (
        each.cls is not None and _built(analysis, each.cls)):
      found.append(each)
  return found


def _built(analysis: Analysis, info: _scopes.ClassInfo) -> bool:
  """Whether the project builds the class: calls it, or reads its name
  other than as a base (a registry `{'name': Model}` a factory calls)."""
  if analysis.flow.constructions(info):
    return True
  for module in analysis.project.all_modules_with((info.name,)):
    tree = module.tree
    bases = {id(b) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
             for b in n.bases} if tree is not None else set()
    if tree is not None and any(
        isinstance(n, ast.Name) and n.id == info.name and isinstance(
            n.ctx, ast.Load) and id(n) not in bases for n in ast.walk(tree)):
      return True
  return False
