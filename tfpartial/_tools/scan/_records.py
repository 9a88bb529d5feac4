"""A field of a record a call builds: `out.training_list` where `out`
comes from `Namespace(loss=loss, training_list=training_list)`, returned
by a function of the project (an Estimator's model builder handing its
train list to the method that makes the step). `_flow` reads the field
through here; a subscript (`out["training_list"]`) already reads the
values of a returned dict."""

from __future__ import annotations

import ast
from typing import Any, List, Optional, Tuple

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels, union

Flow = Any  # `_flow.Flow`, which imports this module.

# How many calls and names deep a record is looked for.
_DEPTH = 8


def field(flow: Flow, node: ast.Attribute, scope: _scopes.Scope
          ) -> Optional[Labels]:
  """What the keyword `node.attr` holds in every record `node.value`
  can be (`Namespace(..., attr=v)`, `SimpleNamespace`, a namedtuple or
  `EasyDict` built by keywords), or None where one of them is not a
  call naming that keyword (or is not known).

  >>> import ast
  >>> from tfpartial._tools.scan._flow import Flow
  >>> tree = ast.parse("def f(v):\\n  r = N(a=v)\\n  return r.a")
  >>> inner = _scopes.collect(tree).scope_of(tree.body[0])
  >>> sorted(field(Flow(), tree.body[0].body[1].value, inner))
  ['param']
  """
  values = field_values(flow, node, scope)
  if not values:
    return None
  return union(flow.labels(value, home) for value, home in values)


def field_values(flow: Flow, node: ast.Attribute, scope: _scopes.Scope
                 ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """The expressions (with where they are) the keyword `node.attr` is
  given in every record `node.value` can be; empty where one of them is
  not a call naming that keyword (or is not known)."""
  found: List[Tuple[ast.expr, _scopes.Scope]] = []
  for call, home in _records(flow, node.value, scope, _DEPTH):
    values = [k.value for k in call.keywords if k.arg == node.attr]
    if not values:
      return []
    found.append((values[0], home))
  return found


def _records(flow: Flow, value: ast.expr, scope: _scopes.Scope, depth: int
             ) -> List[Tuple[ast.Call, _scopes.Scope]]:
  """The calls (with where they are) that `value` is built by; empty
  where one of its values is not a call made with keywords."""
  if depth <= 0:
    return []
  if isinstance(value, ast.Name):
    return _of_name(flow, value, scope, depth)
  if not isinstance(value, ast.Call):
    return []
  inner = _called(flow, value, scope)
  if inner is None:
    return [(value, scope)] if value.keywords and not value.args else []
  if isinstance(inner.node, ast.Lambda):
    return []
  returns = [n.value for n in inner.nodes if isinstance(n, ast.Return)]
  found: List[Tuple[ast.Call, _scopes.Scope]] = []
  for returned in returns:
    got = _records(flow, returned, inner, depth - 1) if isinstance(
        returned, (ast.Name, ast.Call)) else []
    if not got:
      return []
    found.extend(got)
  return found


def _called(flow: Flow, call: ast.Call, scope: _scopes.Scope
            ) -> Optional[_scopes.Scope]:
  """The scope of the project's function `call` runs: a function, a
  method, or the `__call__` of an object of the project's class."""
  function = flow.callee(call, scope)
  known = flow.functions.get(id(function)) if function is not None \
      else None
  if known is not None:
    inner: Optional[_scopes.Scope] = known[1].scope_of(known[0])
    return inner
  owner = flow.labels(call.func, scope).get("obj")
  info: Optional[_scopes.ClassInfo] = flow.classes.get(id(owner)) if (
      owner is not None) else None
  if info is None:
    return None
  method: Optional[_scopes.Scope] = flow.project.method(info, "__call__")
  return method


def _of_name(flow: Flow, value: ast.Name, scope: _scopes.Scope,
             depth: int) -> List[Tuple[ast.Call, _scopes.Scope]]:
  """The records a name's assignments that reach `value` make, or for a
  parameter, the records every call of its function passes."""
  if value.id in scope.params:
    return _passed(flow, value.id, scope, depth)
  if value.id not in scope.defs:
    return []
  defs = scope.defs[value.id]
  found: List[Tuple[ast.Call, _scopes.Scope]] = []
  for index in scope.reaching(value.id, value):
    if defs[index].part is not None or not defs[index].replaces:
      return []
    got = _records(flow, defs[index].value, scope, depth - 1)
    if not got:
      return []
    found.extend(got)
  return found


def _passed(flow: Flow, name: str, scope: _scopes.Scope, depth: int
            ) -> List[Tuple[ast.Call, _scopes.Scope]]:
  """The records the project's calls of `scope`'s function pass as the
  parameter `name` (`self._train(model_output, labels)`)."""
  function = scope.node
  if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return []
  position = scope.params.index(name)
  if scope.cls is not None and scope.params[:1] == ["self"]:
    position -= 1
  found: List[Tuple[ast.Call, _scopes.Scope]] = []
  for caller, call in flow.calls_of(function):
    argument = next((k.value for k in call.keywords if k.arg == name),
                    None)
    if argument is None and 0 <= position < len(call.args) and not any(
        isinstance(a, ast.Starred) for a in call.args[:position + 1]):
      argument = call.args[position]
    got = _records(flow, argument, caller, depth - 1) if isinstance(
        argument, (ast.Name, ast.Call)) else []
    if not got:
      return []
    found.extend(got)
  return found
