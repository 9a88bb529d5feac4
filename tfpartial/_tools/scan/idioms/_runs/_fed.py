"""Gradients fed in from outside the graph: an `apply_gradients` whose
gradients are placeholders, one made for each variable it applies to
(`pairs.append((tf.placeholder(..., var.shape), var))`, `zip([placeholder
for v in vs], vs)`). No loss is taken at such a step: the gradients were
computed (and summed, or averaged across models) elsewhere, and the
variables it applies them to are the ones they were computed for."""

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
          a.elts[0], scope) for a in added)


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
