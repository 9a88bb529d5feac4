"""A second training built only for objects that have a method
(`if callable(getattr(model, 'get_adversarial_variables_to_train',
None)):` or `hasattr(model, ...)`) is no other half for a model whose
class lacks that method: with that model only the step's own list
trains. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes._other_half import (
    _other_trainings)


def others_not_built(analysis: Analysis, step: Step,
                     steps: List[Step]) -> bool:
  """Whether every other training of the step's module runs only under a
  test for a method that the class whose method filters the step's list
  (and its bases) lacks."""
  info = _class_of_filter(analysis, step)
  if info is None:  # Asked first: the other trainings cost a pass each.
    return False
  others = _other_trainings(step, steps)
  if not others:
    return False
  held = {name for each in (info, *analysis.project.base_classes(info))
          for name in each.methods}
  return all(any(name not in held for name in _required(other))
             for other in others)


def _class_of_filter(analysis: Analysis, step: Step
                     ) -> Optional[_scopes.ClassInfo]:
  """The class of the method the step's filter is written in."""
  chosen = step.labels.get("filtered")
  home = analysis.flow.origin.get(id(chosen)) if chosen is not None else None
  while home is not None and home.cls is None:
    home = home.parent
  return home.cls if home is not None else None


def _required(step: Step) -> List[str]:
  """The method names the `if` tests around the step's call ask of an
  object (`hasattr(model, 'm')`, `callable(getattr(model, 'm', None))`)."""
  found: List[str] = []
  for test in _scopes.walk(step.scope.node):
    if isinstance(test, ast.If) and any(
        step.call is n for s in test.body for n in ast.walk(s)):
      found += [name for n in ast.walk(test.test) for name in [_asked(n)]
                if name]
  return found


def _asked(node: ast.AST) -> str:
  """'m' of `hasattr(x, 'm')` or `getattr(x, 'm', ...)`, else ''."""
  if isinstance(node, ast.Call) and _names.call_name(node) in {
      "hasattr", "getattr"} and len(node.args) >= 2 and isinstance(
          node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
    return node.args[1].value
  return ""
