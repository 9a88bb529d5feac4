"""A Keras 2 optimizer's `get_updates(loss, params)` override masking the
gradients it computes (`grads = [g * self.masks[p.name] ...]`) before it
writes each update with `K.update(p, new_p)` (or `update_sub`,
`update_add`, `assign`): the masked elements get no update from the
gradient. A factor made by a comparison (`K.cast(iterations > warmup)`),
or by a comparing op of the step count (an accumulating optimizer's
`K.cast(K.equal((self.iterations + 1) % n, 0))`), is a schedule of
every element, not a mask.
"""

from __future__ import annotations

import ast
from typing import List, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels

# Keras 2 backend's writes, and a variable's own.
_WRITES = {"update", "update_sub", "update_add", "assign", "assign_sub",
           "assign_add"}


def masked(analysis: Analysis
           ) -> List[Tuple[Labels, _scopes.Scope, ast.Call]]:
  """(labels of the masked update, the method, the write) of each write
  in a `get_updates` method of masked gradients."""
  found: List[Tuple[Labels, _scopes.Scope, ast.Call]] = []
  for scope in analysis.functions_named(("get_updates",)):
    if scope.cls is None or analysis.module(scope).is_test:
      continue
    for call in analysis.calls(scope):
      if _names.call_name(call) not in _WRITES or len(call.args) != 2:
        continue
      labels = analysis.flow.labels(call.args[-1], scope)
      mask = labels.get("masked")
      if "grad" in labels and isinstance(mask, ast.expr) and not (
          _compares(mask, scope)):
        found.append((labels, scope, call))
        break  # One finding per method: the mask, not every write.
  return found


def _compares(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` compares values, itself or through the local names
  it reads (`warm = K.cast(self.iterations > 100)`); a membership test
  (`p.name in self.masks`) picks variables, it compares no values."""
  return _scopes.found_through_names(node, scope, _compares_values)


# Ops comparing values element by element.
_COMPARING = {"equal", "not_equal", "greater", "greater_equal", "less",
              "less_equal"}


def _compares_values(item: ast.AST) -> bool:
  if isinstance(item, ast.Call):
    return _names.call_name(item) in _COMPARING and any(
        isinstance(n, ast.Attribute) and n.attr == "iterations"
        for n in ast.walk(item))  # The step count: one value for all.
  return isinstance(item, ast.Compare) and not all(isinstance(op, (
      ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in item.ops)
