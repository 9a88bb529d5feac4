"""A write into a helper's parameter that every call of the helper binds
to a variable made `trainable=False`: population-based training's
`def explore(h): return h.assign(h + noise)`, called as `explore(h)`
on a hyperparameter no optimizer trains. The write moves a setting,
not a weight, so no part of a trained variable is held. A helper that
some call hands a trained variable (or something the scan cannot
trace) stays a candidate."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._copies import _trained_too

# Past this many calls the name is too common to be one helper's.
_MAX_CALLS = 8


def passed_untrainable(analysis: Analysis, scope: _scopes.Scope,
                       target: ast.AST) -> bool:
  """Whether `target` is a parameter of `scope`'s function, never bound
  anew in it, and each of the function's calls (one at least) passes a
  variable made `trainable=False` for it."""
  function = scope.node
  if not isinstance(target, ast.Name) or target.id not in scope.params or (
      not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))):
    return False
  spelled = analysis.project.callers(function.name)
  if not spelled or len(spelled) > _MAX_CALLS or scope.defs.get(target.id):
    return False  # No call seen, too common a name, or bound anew.
  # Only the calls of this function (another module's `explore()` aside).
  calls = [(caller, call) for caller, call in spelled
           if analysis.flow.callee(call, caller) is function]
  if not calls:
    return False
  for caller, call in calls:
    given = _names.argument(call, scope.params, target.id)
    if given is None or not _trained_too.only_untrainable(
        analysis.flow.labels(given, caller)):
      return False
  return True
