"""Gradients fed in from outside the graph: an `apply_gradients` whose
gradients are placeholders, one made for each variable it applies to
(`pairs.append((tf.placeholder(..., var.shape), var))`, `zip([placeholder
for v in vs], vs)`). No loss is taken at such a step: the gradients were
computed (and summed, or averaged across models) elsewhere, and the
variables it applies them to are the ones they were computed for. So
too an update passed in as a mapping, each entry applied to the
variable its key names (a federated server's aggregated update)."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_PLACEHOLDERS = {"placeholder", "placeholder_with_default"}


def fed_gradients(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether the `apply_gradients` `call` applies only placeholders."""
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
              _keyed(a, scope) for a in added)


def _keyed(added: ast.expr, scope: _scopes.Scope) -> bool:
  """`(-1 * difference, variable_map[name])` appended in `for name,
  difference in update.items()`, `update` a parameter: an update made
  elsewhere (a federated server's aggregate), each entry applied to the
  variable its own key names; the update chooses, not a filter here."""
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
                                      for n in ast.walk(added.elts[0]))
  return False


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
