"""A step built as one update op per variable (a hand-written applier's
list), of which a loop runs only those a test keeps (PathNet's A3C:
`if var_idx[i] == 1.0: ops += [self.apply_gradients[i]]`, then
`sess.run(ops)`): the variables whose ops the test drops get no update.
Found at the test; the step's own list is then not the choice."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# What runs a list of ops.
_RUNS = ("run",)


Chosen = Tuple[ast.expr, _scopes.Scope, ast.Call, ast.Call]


def chosen_ops(analysis: Analysis) -> List[Chosen]:
  """(the test, its scope, the step, the run) of each list of a step's
  update ops that a loop fills under a test of the index and a session
  runs: one per step, at its first test."""
  found: Dict[int, Chosen] = {}
  for scope, call in analysis.calls_named(_RUNS):
    if analysis.module(scope).is_test or not call.args or not isinstance(
        call.args[0], ast.Name):
      continue
    for test, element in _chosen(scope, call.args[0].id):
      step = _step_of(analysis, element, scope)
      if step is not None and (id(step) not in found or (
          test.lineno < found[id(step)][0].lineno)):
        found[id(step)] = (test, scope, step, call)
  return list(found.values())


def _chosen(scope: _scopes.Scope, name: str
            ) -> Iterator[Tuple[ast.expr, ast.Subscript]]:
  """(the test, the element added) for each `name += [ops[i]]` or
  `name.append(ops[i])` a loop over `i` makes under a test that compares
  an element at `i` with a constant."""
  for each in scope.defs.get(name, []):
    # `ops += [x]` is bound as `ops + [x]`; `ops.append(x)` as `x`.
    value, added = each.value, each.value
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
      added = value.right
    test = scope.guards.get(id(value))
    elements = added.elts if isinstance(added, ast.List) else [added]
    if test is None or len(elements) != 1 or not isinstance(
        elements[0], ast.Subscript):
      continue
    index = _names.dotted(elements[0].slice)
    if index is not None and _tests_element(test, index):
      yield test, elements[0]


def _tests_element(test: ast.expr, index: str) -> bool:
  """`flags[i] == 1.0`: an element at `index` compared with a constant."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], (ast.Eq, ast.NotEq))) and isinstance(
          test.left, ast.Subscript) and _names.dotted(
              test.left.slice) == index and isinstance(
                  test.comparators[0], ast.Constant)


def _step_of(analysis: Analysis, element: ast.Subscript,
             scope: _scopes.Scope) -> Optional[ast.Call]:
  """The step whose ops `element` indexes: `self.apply_gradients` set in
  the class to what an `apply_gradients` call returned."""
  spelled = _names.dotted(element.value)
  values: List[ast.expr] = []
  if spelled is not None and spelled.startswith("self.") and (
      spelled.count(".") == 1) and scope.cls is not None:
    values = [v for v, _ in analysis.project.attribute(scope.cls, spelled)]
  elif isinstance(element.value, ast.Name):
    values = [d.value for d in scope.defs.get(element.value.id, [])]
  steps = [v for v in values if isinstance(v, ast.Call) and (
      _names.call_name(v) in _names.TRAIN_STEPS)]
  return steps[0] if len(steps) == 1 and len(values) == 1 else None
