"""Whether a filter by a function's own scope parameter is left at its
default `None` by every call of the function (`def apply_grads(self,
loss, scope=None): vars = tf.get_collection(TRAINABLE_VARIABLES, scope)`,
only ever called as `self.apply_grads(self.loss)`): a collection read
without a scope lists every variable, so the step trains them all."""

from __future__ import annotations

import ast
from typing import Dict, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow


def never_scoped(flow: Flow, node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` (a variable-list call) filters by a parameter of
  `scope`'s function that defaults to `None` and that every call of the
  function leaves out or passes as `None`."""
  chosen = _names.scope_argument(node) if isinstance(node, ast.Call) \
      else None
  function = scope.node
  if not isinstance(chosen, ast.Name) or not isinstance(
      function, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
          chosen.id in scope.defs):
    return False
  position = _none_default(function, chosen.id)
  if position is None:
    return False
  if scope.cls is not None and not _static(function):
    position -= 1  # `self` is not written at the call.
  calls = flow.calls_of(function)
  return bool(calls) and flow.every_call_of(function) and all(
      _left_out(call, chosen.id, position) for _, call in calls)


def _none_default(function: ast.AST, name: str) -> Optional[int]:
  """The position of parameter `name` when its default is `None` (-1 for
  a keyword-only one), else None."""
  arguments = getattr(function, "args")
  positional = [*arguments.posonlyargs, *arguments.args]
  defaults: Dict[str, Optional[ast.expr]] = dict(zip(
      [a.arg for a in positional[len(positional) - len(
          arguments.defaults):]], arguments.defaults))
  defaults.update(zip([a.arg for a in arguments.kwonlyargs],
                      arguments.kw_defaults))
  if not _is_none(defaults.get(name)):
    return None
  names = [a.arg for a in positional]
  return names.index(name) if name in names else -1


def _left_out(call: ast.Call, name: str, position: int) -> bool:
  """Whether `call` gives parameter `name` (at `position`) nothing but
  its default `None`, and spreads no `*args` or `**kwargs` that could."""
  if any(isinstance(a, ast.Starred) for a in call.args) or any(
      k.arg is None for k in call.keywords):
    return False
  given = [k.value for k in call.keywords if k.arg == name]
  if 0 <= position < len(call.args):
    given.append(call.args[position])
  return all(_is_none(g) for g in given)


def _static(function: ast.AST) -> bool:
  return any(_names.dotted(d) == "staticmethod"
             for d in getattr(function, "decorator_list"))


def _is_none(node: Optional[ast.AST]) -> bool:
  return isinstance(node, ast.Constant) and node.value is None
