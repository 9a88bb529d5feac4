"""A model's own accessor of some of its parts' variables, as a step's list.

`train_vars = model.trainable_classifier_vars` (an `@property` returning
`self.classifier.trainable_variables`) or `model.prompt_tune_variables()`
(a method returning `[self.prompt_tokens]` and the head's variables),
where the function runs `model(x)` and the model's forward (with the
methods of its own it calls) runs other parts it builds: the step trains
those parts, the rest of the model runs untrained. An accessor that
returns the whole model (`self.trainable_variables`) or every part the
forward runs is no choice (`_subset.strict`, the one rule for a strict
subset). The precision gates decide as for any filter.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan import _model_parts
from tfpartial._tools.scan.idioms._sources import _subset

_DEPTH = 3


def accessed(analysis: Analysis, chosen: ast.AST, scope: _scopes.Scope
             ) -> Optional[ast.expr]:
  """The read of the model's accessor a step's list `chosen` holds (in
  one of its values), or None: one that returns a strict subset of the
  model's variables (`_subset.strict`; some of the parts its forward runs
  only for another object, one the function runs)."""
  for value, home in _values(chosen, scope, 0):
    read = value.func if isinstance(value, ast.Call) and not (
        value.args or value.keywords) else value
    if not isinstance(read, ast.Attribute) or not isinstance(
        read.value, ast.Name):
      continue
    info = _owner(analysis, read.value, home)
    method = analysis.project.method(info, read.attr) if (
        info is not None) else None
    if info is None or method is None or _is_property(
        method.node) == (read is not value):
      continue
    run = read.value.id != "self" and method is info.methods.get(
        read.attr) and _model_parts.called(read.value.id, home)
    if _subset.strict(analysis.project, info, method, run):
      return value
  return None


def _owner(analysis: Analysis, name: ast.Name, scope: _scopes.Scope
           ) -> Optional[_scopes.ClassInfo]:
  """The project class of the object `name` holds: the flow's, or for
  `self` the class of the method it is read in."""
  if name.id == "self":
    place: Optional[_scopes.Scope] = scope
    while place is not None and place.cls is None:
      place = place.parent
    return place.cls if place is not None else None
  owner = analysis.flow.labels(name, scope).get("obj")
  if owner is not None:
    return analysis.flow.classes.get(id(owner))
  return _constructed_as(analysis, name, scope)


def _constructed_as(analysis: Analysis, name: ast.Name,
                    scope: _scopes.Scope) -> Optional[_scopes.ClassInfo]:
  """The project class every assignment of `name` calls, the flow aside
  (`model = model(layers=[...])`, a class of a star import rebound to
  its instance)."""
  home = _defining(name, scope)
  found: Optional[_scopes.ClassInfo] = None
  for each in home.defs[name.id] if home is not None else ():
    value = each.value
    if not isinstance(value, ast.Call) or not isinstance(
        value.func, ast.Name):
      return None
    target = analysis.project.resolve(home, value.func.id) if (
        home is not None) else None
    if not isinstance(target, _scopes.ClassInfo) or (
        found is not None and target is not found):
      return None
    found = target
  return found


def owner_class(analysis: Analysis, chosen: Optional[ast.AST],
                scope: _scopes.Scope) -> Optional[ast.ClassDef]:
  """The project class whose accessor, or whose whole own list
  (`model.trainable_variables`), a step's list `chosen` reads, or None."""
  for value, home in _values(chosen, scope, 0) if chosen is not None else ():
    read = value.func if isinstance(value, ast.Call) else value
    if isinstance(read, ast.Attribute) and isinstance(read.value, ast.Name):
      owner = analysis.flow.labels(read.value, home).get("obj")
      info = analysis.flow.classes.get(id(owner)) if owner else None
      if info is not None:
        return info.node
  return None


def _values(node: ast.AST, scope: _scopes.Scope, depth: int
            ) -> Iterator[Tuple[ast.expr, _scopes.Scope]]:
  """What `node` may hold: the values of a local name, both arms of a
  conditional, each side of a sum."""
  if depth > _DEPTH:
    return
  home = _defining(node, scope)
  if isinstance(node, ast.Name) and home is not None:
    for each in home.defs[node.id]:
      if each.value is not None and each.value is not node:
        yield from _values(each.value, home, depth + 1)
  elif isinstance(node, ast.IfExp):
    yield from _values(node.body, scope, depth + 1)
    yield from _values(node.orelse, scope, depth + 1)
  elif isinstance(node, ast.expr):
    yield node, scope


def _defining(node: ast.AST, scope: _scopes.Scope
              ) -> Optional[_scopes.Scope]:
  """The scope whose assignment a name `node` read in `scope` reads: its
  own, or the module's around a function (`params = net.params()` at the
  top of a script, read in its step)."""
  place: Optional[_scopes.Scope] = scope
  while isinstance(node, ast.Name) and place is not None:
    if node.id in place.defs:
      return place
    place = place.parent if place.cls is None else None
  return None


def _is_property(function: ast.AST) -> bool:
  return any("property" in (_names.dotted(d) or "").lower()
             for d in getattr(function, "decorator_list", []))
