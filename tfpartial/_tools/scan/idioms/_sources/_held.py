"""The variables an object passed to a trainer's constructor holds: a
step trains `self.policy.params` (`self.policy` a parameter of the base
class's `__init__`), and the scripts build the trainer with
`policy=NetworkPretrained(...)`, whose `self.params =
model.trainable_weights[-2:]`: the filter is in that class (a policy
loaded pretrained, only its last layer fine-tuned by TRPO)."""

from __future__ import annotations

import ast
import itertools
from typing import Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# How many values and classes are followed (a project's trainers are few).
_FOLLOWED = 8


def held_filters(analysis: Analysis, chosen: ast.AST,
                 scope: _scopes.Scope
                 ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """(the filter, its scope) of each class whose objects the project
  passes as the constructor parameter that `chosen` reads an attribute
  of, where that class assigns the attribute a filtered list."""
  read = _read_of_parameter(analysis, chosen, scope, 0)
  if read is None or scope.cls is None:
    return []
  _, parameter, attribute = read
  flow = analysis.flow
  found: List[Tuple[ast.expr, _scopes.Scope]] = []
  for info in _passed_classes(analysis, scope.cls, parameter):
    for value, home in analysis.project.attribute(
        info, f"self.{attribute}")[:_FOLLOWED]:
      if "filtered" in flow.chosen(value, home, flow.labels(value, home)):
        found.append((value, home))
  return found


def _read_of_parameter(analysis: Analysis, expr: ast.AST,
                       scope: _scopes.Scope, depth: int
                       ) -> Optional[Tuple[_scopes.Scope, str, str]]:
  """(`__init__`, its parameter, the attribute read) when `expr` is
  `self.p.attr` (or a name or `self.x` holding it) with `self.p` set
  only from the parameter `p` of the class's `__init__`."""
  if depth > 3 or scope.cls is None and not isinstance(expr, ast.Name):
    return None
  if isinstance(expr, ast.Name):
    defs = scope.defs.get(expr.id, [])
    return _read_of_parameter(analysis, defs[0].value, scope, depth + 1) \
        if len(defs) == 1 else None
  spelled = _names.dotted(expr) if isinstance(expr, ast.Attribute) else None
  if spelled is None or not spelled.startswith("self.") or (
      scope.cls is None):
    return None
  parts = spelled.split(".")
  values = analysis.project.attribute(scope.cls, f"self.{parts[1]}")
  if len(values) != 1:
    return None
  value, home = values[0]
  if len(parts) == 2:
    return _read_of_parameter(analysis, value, home, depth + 1)
  if len(parts) == 3 and home.name == "__init__" and isinstance(
      value, ast.Name) and value.id in home.params and not home.defs.get(
          value.id):
    return home, value.id, parts[2]
  return None


def _passed_classes(analysis: Analysis, home: _scopes.ClassInfo,
                    parameter: str) -> Iterator[_scopes.ClassInfo]:
  """The project classes of the objects the constructions of the step's
  class `home` (or of a subclass) pass as `parameter` by keyword."""
  flow = analysis.flow
  for info in itertools.islice(_with_subclasses(analysis, home), _FOLLOWED):
    for place, call in flow.constructions(info):
      given = next((k.value for k in call.keywords if k.arg == parameter),
                   None)
      if given is None:
        continue
      made = flow.labels(given, place).get("obj")
      built = flow.classes.get(id(made)) if made is not None else None
      if built is not None:
        yield built


def _with_subclasses(analysis: Analysis, info: _scopes.ClassInfo
                     ) -> Iterator[_scopes.ClassInfo]:
  """`info` and the top-level classes of the project deriving from it."""
  yield info
  project = analysis.project
  for module in project.all_modules_with((info.name,)):
    top = project.parsed(module)
    for each in (top.classes.values() if top is not None else ()):
      if each is not info and info in project.base_classes(each):
        yield each
