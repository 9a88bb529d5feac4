"""Whether a class runs a network it keeps on `self` before it opens the
scope a filter keeps, outside that scope: `self.flownets = EASYFLOW()` in
`__init__`, then `uv = self.flownets.forward(frame, ref)` (a flow network
with a scope of its own) and `with tf.variable_scope('srmodel'):` around
the network that reads the warped frames. A step that trains only
`'srmodel' in v.name` leaves the flow network fixed: the scope names a
part of the model, not all the class builds. `_built_outside` reads the
same for a model built by a local name (`resnet = Model(...)`). Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._wholes import _built_outside
from tfpartial._tools.scan.idioms._wholes import _own_scopes


def run_outside(analysis: Analysis, kept: Set[str],
                home: _scopes.Scope) -> bool:
  """Whether a method of `home`'s class runs a network kept on `self`
  (a class of the project whose methods open a scope of their own or
  create variables) and binds its output, read later, before a statement
  that opens one of the scopes `kept`."""
  info = _own_scopes.class_of(home)
  if info is None or not kept:
    return False
  networks: Dict[str, bool] = {}
  for method in info.methods.values():
    body = getattr(method.node, "body", [])
    for index, statement in enumerate(body):
      if _built_outside.opens(statement, kept) and any(
          _runs_network(analysis, info, s, networks, method)
          for s in body[:index]):
        return True
  return False


def _runs_network(analysis: Analysis, info: _scopes.ClassInfo,
                  statement: ast.stmt, networks: Dict[str, bool],
                  method: _scopes.Scope) -> bool:
  """Whether `statement` (or one nested in it) binds a name, read after
  it, to `self.net.method(...)` for a network `self.net` of the class."""
  for node in ast.walk(statement):
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Name)) and isinstance(
            node.value, ast.Call) and isinstance(node.value.func,
                                                 ast.Attribute)):
      continue
    owner = _names.dotted(node.value.func.value)
    if owner is None or not owner.startswith("self.") or owner.count(
        ".") != 1:
      continue
    if owner not in networks:
      networks[owner] = _network(analysis, info, owner, method)
    if networks[owner] and _read_after(node.targets[0].id, node,
                                       method.node):
      return True
  return False


def _network(analysis: Analysis, info: _scopes.ClassInfo, owner: str,
             method: _scopes.Scope) -> bool:
  """Whether every value of `self.net` is an instance of a project class
  whose methods open a variable scope or create variables."""
  values = info.attributes.get(owner, [])
  return bool(values) and all(
      isinstance(value, ast.Call) and _builds(analysis, value, where)
      for value, where in values)


def _builds(analysis: Analysis, call: ast.Call, where: _scopes.Scope
            ) -> bool:
  dotted = _names.dotted(call.func)
  target = analysis.project.resolve(where, dotted) if dotted else None
  if not isinstance(target, _scopes.ClassInfo):
    return False
  return any(isinstance(n, ast.Call) and (_names.call_name(
      n) in _names.TF_SCOPES | _names.VARIABLES) for c in [
          target, *analysis.project.base_classes(target)]
             for m in c.methods.values() for n in ast.walk(m.node))


def _read_after(name: str, bound: ast.Assign, function: ast.AST) -> bool:
  """Whether `function` reads `name` after the statement binding it."""
  return any(isinstance(n, ast.Name) and n.id == name and isinstance(
      n.ctx, ast.Load) and n.lineno > bound.lineno
             for n in ast.walk(function))
