"""Gradients fed in from outside the graph: an `apply_gradients` whose
gradients are placeholders, one made for each variable it applies to
(`pairs.append((tf.placeholder(..., var.shape), var))`, `zip([placeholder
for v in vs], vs)`). No loss is taken at such a step: the gradients were
computed (and summed, or averaged across models) elsewhere, and the
variables it applies them to are the ones they were computed for. So
too an update passed in as a mapping, each entry applied to the
variable its key names (a federated server's aggregated update), as the
method is given it: a mapping rebound or shortened in the method, or
built by a filter in a caller of the project, is a part."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

_PLACEHOLDERS = {"placeholder", "placeholder_with_default"}


def fed_gradients(call: ast.Call, scope: _scopes.Scope,
                  project: Optional[_project.Project] = None) -> bool:
  """Whether the `apply_gradients` `call` applies only placeholders, or
  only the entries of a mapping its function is given (`project`: the
  callers that give it)."""
  if _names.call_name(call) != "apply_gradients" or not call.args:
    return False
  pairs = _names.unwrapped(call.args[0])
  if isinstance(pairs, ast.Call) and _names.call_name(pairs) == "zip" and (
      len(pairs.args) == 2):
    return _placeholders(pairs.args[0], scope)
  spelled = _names.dotted(pairs)
  if spelled is None:
    return False
  added = [node.args[0] for node in scope.nodes if isinstance(
      node, ast.Call) and _names.call_name(node) == "append" and isinstance(
          node.func, ast.Attribute) and _names.dotted(
              node.func.value) == spelled and len(node.args) == 1]
  return bool(added) and all(
      isinstance(a, ast.Tuple) and len(a.elts) == 2 and _placeholder(
          a.elts[0], scope) for a in added) or bool(added) and all(
              _keyed(a, scope, project) for a in added)


def _keyed(added: ast.expr, scope: _scopes.Scope,
           project: Optional[_project.Project]) -> bool:
  """`(-1 * difference, variable_map[name])` appended in `for name,
  difference in update.items()`, `update` a parameter applied as given
  (`_as_given`): an update made elsewhere (a federated server's
  aggregate), each entry applied to the variable its own key names; the
  update chooses, not a filter here."""
  if not isinstance(added, ast.Tuple) or len(added.elts) != 2:
    return False
  looked_up = added.elts[1]
  if isinstance(looked_up, ast.Name):  # `variable = variable_map[name]`.
    defs = scope.defs.get(looked_up.id, [])
    looked_up = defs[0].value if len(defs) == 1 else looked_up
  if not isinstance(looked_up, ast.Subscript):
    return False
  key = looked_up.slice
  for loop in scope.nodes:
    if not isinstance(loop, ast.For) or not any(
        node is added for node in ast.walk(loop)):
      continue
    source, target = loop.iter, loop.target
    if any(isinstance(node, (ast.If, ast.IfExp, ast.Continue, ast.Break))
           for node in ast.walk(loop)):
      return False  # Some keys skipped: a choice made here.
    return isinstance(source, ast.Call) and _names.call_name(
        source) == "items" and isinstance(source.func, ast.Attribute) and (
            isinstance(source.func.value, ast.Name)) and (
                source.func.value.id in scope.params) and isinstance(
                    target, ast.Tuple) and len(target.elts) == 2 and all(
                        isinstance(t, ast.Name) for t in target.elts) and (
                            isinstance(key, ast.Name)) and (
                                key.id == getattr(target.elts[0], "id", "")
                            ) and any(isinstance(n, ast.Name) and n.id == (
                                getattr(target.elts[1], "id", ""))
                                      for n in ast.walk(added.elts[0])) and (
                                          _as_given(source.func.value.id,
                                                    scope, project))
  return False


def _as_given(name: str, scope: _scopes.Scope,
              project: Optional[_project.Project]) -> bool:
  """Whether the parameter `name` is applied as the function is given
  it: never rebound (`statistics = {k: d for ... if 'emb' not in k}`),
  nor shortened in place (`del statistics[k]`, `statistics.pop(k)`),
  and no caller of the project gives it a mapping built by a filter."""
  if name in scope.defs:
    return False
  for node in scope.nodes:
    if isinstance(node, ast.Delete) and any(
        isinstance(t, ast.Subscript) and _names.dotted(t.value) == name
        for t in node.targets) or isinstance(node, ast.Call) and (
            _names.call_name(node) in {"pop", "popitem", "clear"}) and (
                isinstance(node.func, ast.Attribute)) and _names.dotted(
                    node.func.value) == name:
      return False
  function = scope.node
  if project is None or not isinstance(
      function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return True
  position = scope.params.index(name) - (scope.cls is not None)
  for caller, call in project.callers(function.name):
    given = [k.value for k in call.keywords if k.arg == name] or (
        call.args[position:position + 1] if position >= 0 else [])
    if any(_built_by_filter(each, caller) for each in given):
      return False
  return True


def _built_by_filter(value: ast.expr, scope: _scopes.Scope) -> bool:
  """A mapping built by a comprehension with a test, by `filter()`, or
  filled under an `if` (`for ...: if 'emb' not in v.name: update[k] =
  g`)."""
  if isinstance(value, ast.Name) and any(
      not d.replaces and d.where.guard is not None
      for d in scope.defs.get(value.id, ())):
    return True
  return any(isinstance(each, (ast.DictComp, ast.ListComp, ast.SetComp,
                               ast.GeneratorExp)) and any(
      g.ifs for g in each.generators) or isinstance(each, ast.Call) and (
          _names.call_name(each) == "filter")
             for each in _scopes.values_reaching(value, scope))


def _placeholders(node: ast.expr, scope: _scopes.Scope) -> bool:
  """A list of placeholders: `[tf.placeholder(...) for v in vs]`, or a
  name bound only to one."""
  if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
    return _placeholder(node.elt, scope)
  defs = scope.defs.get(node.id, []) if isinstance(node, ast.Name) else []
  return bool(defs) and all(
      isinstance(d.value, (ast.ListComp, ast.GeneratorExp)) and (
          _placeholder(d.value.elt, scope)) for d in defs)


def _placeholder(node: Optional[ast.expr], scope: _scopes.Scope) -> bool:
  """A placeholder made here, or a name bound only to one."""
  if isinstance(node, ast.Call):
    return _names.call_name(node) in _PLACEHOLDERS
  defs = scope.defs.get(node.id, []) if isinstance(node, ast.Name) else []
  return bool(defs) and all(isinstance(d.value, ast.Call) and (
      _names.call_name(d.value) in _PLACEHOLDERS) for d in defs)
