"""Steps that are no other training beside a filtered one made in an
optimizer's own method (a wrapper optimizer whose `compute_gradients`
filters its `var_list` by the scopes it was configured with): a call of
that method (`opt.compute_gradients(loss, tvars)`, which runs the
filtered step), or a wrapper passing its own parameters on to the
optimizer it wraps (`self._optimizer.compute_gradients(loss, *args,
**kwargs)`): each trains what its callers give, through the filter."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def forwarded(other: ast.Call, scope: _scopes.Scope,
              step_scope: _scopes.Scope) -> bool:
  """Whether the step `other` (in `scope`), beside a step made in the
  method `step_scope`, calls a method of that name or passes its
  function's loss and variables parameters on unchanged."""
  method = step_scope.node
  if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
      step_scope.cls is None and not _in_class(step_scope)):
    return False
  if _names.call_name(other) == method.name:
    return True
  loss = other.args[0] if other.args else None
  rest = other.args[1:]
  return isinstance(loss, ast.Name) and loss.id in scope.params and bool(
      rest) and all(isinstance(a, ast.Starred) and isinstance(
          a.value, ast.Name) and a.value.id in scope.params for a in rest)


def _in_class(scope: _scopes.Scope) -> bool:
  return scope.parent is not None and scope.parent.cls is not None
