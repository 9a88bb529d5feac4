"""Where a helper chooses the list a step trains: `variables_to_train =
_get_variables_to_train()` (slim's), `_get_localization_vars_to_train(
scopes)`, a function of another module. The choice is the statement
inside the helper that keeps some variables (`tf.get_collection(
TRAINABLE_VARIABLES, scope)` per scope, `if FLAGS.layer in var.name:
chosen.append(var)`), not the line that calls it: a reader changing
what trains edits the helper. The call and the step are named in the
message. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan._labels import Labels

# A helper handed variables (`filter_variables(tf.trainable_variables(),
# regex)`) filters what its caller chose: the choice is at the call.
_HANDED = frozenset({"var", "grad", "filtered"})
# The label a hit carries for the helper's call, named in its message.
CALLED = "called"


def chosen_inside(flow: Flow, node: ast.expr, scope: _scopes.Scope,
                  chosen: object) -> Optional[ast.expr]:
  """The filter `chosen` (the step's "filtered" label) when it lies in
  the function of the project that the call `node` runs, else None
  (not a call of the project's, or a helper handed the variables it
  filters)."""
  if not isinstance(node, ast.Call) or not isinstance(chosen, ast.expr) or (
      chosen is node):
    return None
  home = flow.origin.get(id(node), scope)
  callee = flow.callee(node, home)
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(
      _HANDED & set(flow.labels(arg, home)) for arg in (
          *node.args, *(k.value for k in node.keywords))):
    return None
  place = flow.origin.get(id(chosen))
  while place is not None and place.node is not callee:
    place = place.parent
  return chosen if place is not None else None


def mention(labels: Labels) -> str:
  """`, returned by `helper()` (line N)` for a hit moved into a
  helper, else the empty string."""
  called = labels.get(CALLED)
  if not isinstance(called, ast.Call):
    return ""
  return (f", returned by `{_names.call_name(called)}()` (line "
          f"{called.lineno})")
