"""A list of variables cut where a name test finds its first match
(`index = next(i for i, name in enumerate(names) if fine_tune_from in
name)`, then `all_variables[index:]` or `[:index + 1]`): the variables
on the other side of the cut stay fixed. Found at the step's list or in
the function whose result the step trains. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Calls that test a variable's name for a part of it.
_NAME_TESTS = {"startswith", "find", "search", "match", "endswith"}


def sliced(chosen: ast.AST, scope: _scopes.Scope) -> Optional[ast.expr]:
  """The cut `chosen` is or its name holds (one of its values), else
  None."""
  values = [chosen]
  if isinstance(chosen, ast.Name):
    values = [d.value for d in scope.defs.get(chosen.id, [])]
  for value in values:
    if isinstance(value, ast.Subscript) and isinstance(
        value.slice, ast.Slice) and _cut_by_name(value.slice, scope):
      return value
  return None


def _cut_by_name(cut: ast.Slice, scope: _scopes.Scope) -> bool:
  """A slice with one bound, a name found by a name test (`index`,
  `index + 1`)."""
  bounds = [b for b in (cut.lower, cut.upper) if b is not None]
  if len(bounds) != 1 or cut.step is not None:
    return False
  bound = bounds[0]
  if isinstance(bound, ast.BinOp) and isinstance(bound.right, ast.Constant):
    bound = bound.left
  return isinstance(bound, ast.Name) and any(
      _name_test(d.value) for d in scope.defs.get(bound.id, []))


def _name_test(value: ast.expr) -> bool:
  """Whether `value` finds an index by testing names for a text
  (`'block4' in name`, `name.startswith(prefix)`)."""
  for node in ast.walk(value):
    if isinstance(node, ast.Compare) and any(
        isinstance(op, ast.In) for op in node.ops) and not isinstance(
            node.comparators[0], (ast.List, ast.Tuple, ast.Set)):
      return True
    if isinstance(node, ast.Call) and _names.call_name(node) in _NAME_TESTS:
      return True
  return False
