"""Whether a gradient stands alone in its module: no other step of the
module (no `minimize`, no `apply_gradients`, no other gradient) and, in
a function, no value handed back to a caller. A tutorial's `grads =
tf.gradients(y, [w1])` fetched by `sess.run(grads)` and printed shows a
gradient; nothing applies it, so whatever its list names, no variable
is trained, and none is frozen. Part of `var-list-filter` (which checks
that the gradient is only fetched or shown)."""

from __future__ import annotations

import ast
from typing import Iterable, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def alone(scope: _scopes.Scope, call: ast.Call,
          others: Iterable[Tuple[ast.Call, _scopes.Scope]]) -> bool:
  """Whether `call` (a gradient taken in `scope`) is the only step of its
  module among `others` (each step's call and scope) and its function
  returns nothing a caller could apply. An optimizer's
  `compute_gradients`, or a gradient never read, is left to the step
  it is written for."""
  if _names.call_name(call) not in {"gradients", "gradient"} or not (
      _read(scope, call)) or any(_returns(each) for each in _chain(scope)):
    return False
  root = _root(scope)
  return not any(other is not call and _root(where) is root
                 for other, where in others)


def _root(scope: _scopes.Scope) -> _scopes.Scope:
  """The module's scope."""
  while scope.parent is not None:
    scope = scope.parent
  return scope


def _chain(scope: _scopes.Scope) -> Iterable[_scopes.Scope]:
  """`scope` and the functions around it."""
  current = scope
  while current.parent is not None:
    yield current
    current = current.parent


def _returns(scope: _scopes.Scope) -> bool:
  """Whether a function hands a value back (a `return` or `yield`)."""
  return any(isinstance(n, (ast.Yield, ast.YieldFrom)) or isinstance(
      n, ast.Return) and n.value is not None for n in scope.nodes)


def _read(scope: _scopes.Scope, call: ast.Call) -> bool:
  """Whether the name `call` is assigned to is read in `scope`."""
  names = {t.id for n in scope.nodes if isinstance(n, ast.Assign)
           and n.value is call for t in n.targets if isinstance(t, ast.Name)}
  return any(isinstance(n, ast.Name) and n.id in names and isinstance(
      n.ctx, ast.Load) for n in scope.nodes)
