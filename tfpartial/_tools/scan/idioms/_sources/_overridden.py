"""The filters of the other overrides a step's list may come from, where
the flow followed one: `model.get_variables_to_train()` of a model a
factory builds runs the method of whichever class was built, and each
override that filters is a list the step trains (`_dispatched` finds
the overrides). Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms._sources import _dispatched
from tfpartial._tools.scan.idioms._sources._origins import _returned_filter


def other_filters(analysis: Analysis, chosen: Optional[ast.AST],
                  scope: _scopes.Scope, labels: Labels) -> List[ast.expr]:
  """The filters the other overrides of the method the step's list is
  read from return, beside the one its labels hold (none where they hold
  none)."""
  held = labels.get("filtered")
  if chosen is None or not isinstance(held, ast.expr):
    return []
  values = _scopes.values_reaching(chosen, scope)
  found: List[ast.expr] = []
  for value in values:
    for method in _dispatched.overrides(analysis, value, scope):
      node = _returned_filter(analysis.flow, method)
      if node is not None and node is not held and node not in found:
        found.append(node)
  return found
