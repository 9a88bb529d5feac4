"""A method of an optimizer wrapper that trains the list its object keeps
when its caller passes none (`if not var_list: var_list = self._var_list`,
the list given to the wrapper's constructor): a step of its own, whose
list is chosen where the wrapper is built, not a function that only passes
its callers' lists on."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow


def filled_in(given: Optional[ast.AST], owner: _scopes.Scope, flow: Flow
              ) -> bool:
  """Whether the method `owner` sets its parameter `given` to an
  attribute of its object that is filtered where the object is built."""
  if owner.cls is None or not isinstance(given, ast.Name):
    return False
  return any(_own_attribute(d.value) and "filtered" in flow.sink_labels(
      d.value, owner, "filtered") for d in owner.defs.get(given.id, []))


def _own_attribute(value: ast.expr) -> bool:
  """`self.<name>`."""
  return isinstance(value, ast.Attribute) and isinstance(
      value.value, ast.Name) and value.value.id == "self"
