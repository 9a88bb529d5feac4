"""Whether a step trains the scope that the function around it opens
around its whole model, as canned Estimators write it: `with
tf.variable_scope(parent_scope, values=...) as scope:` around the call
that builds the logits, `absolute_scope = scope.name` in it, and the
train op built in a nested function (`def _train_op_fn(loss):
optimizer.minimize(loss, var_list=tf.get_collection(
TRAINABLE_VARIABLES, scope=absolute_scope))`). What the `with` builds
reads only the function's parameters and values it computes without
calls: no network built before it, outside the scope (a backbone whose
output the scoped head reads), is left out. Part of `var-list-filter`
(`_train_step._opened_here`)."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def opened_around(chosen: ast.AST, home: _scopes.Scope) -> bool:
  """Whether `chosen` (a name read in `home`) is `scope.name` of a `with
  tf.variable_scope(...) as scope:` that `home` or a function around it
  opens around what it builds, from its parameters alone."""
  if not isinstance(chosen, ast.Name):
    return False
  owner: Optional[_scopes.Scope] = home
  while owner is not None and chosen.id not in owner.defs:
    owner = owner.parent
  if owner is None or not isinstance(owner.node, _FUNCTIONS):
    return False
  defs = owner.defs[chosen.id]
  value = defs[0].value if len(defs) == 1 else None
  if not isinstance(value, ast.Attribute) or value.attr != "name" or (
      not isinstance(value.value, ast.Name)):
    return False
  alias = value.value.id
  return any(_opens_as(n, alias) and _built_from_inputs(n, owner)
             for n in owner.nodes if isinstance(n, ast.With))


def _opens_as(statement: ast.With, alias: str) -> bool:
  """`with tf.variable_scope(...) as alias:` around a call."""
  return any(isinstance(i.context_expr, ast.Call) and _names.call_name(
      i.context_expr) in _names.TF_SCOPES and isinstance(
          i.optional_vars, ast.Name) and i.optional_vars.id == alias
             for i in statement.items) and any(
                 isinstance(c, ast.Call) for s in statement.body
                 for c in _scopes.walk(s))


def _built_from_inputs(statement: ast.With, owner: _scopes.Scope) -> bool:
  """Whether every name the `with` block reads that `owner` binds is
  bound only to values made without a call (`is_training = mode ==
  TRAIN`), or is a parameter: nothing built before the scope feeds it."""
  bound: Set[str] = {n.id for s in [*statement.body, *(
      i.optional_vars for i in statement.items if i.optional_vars)]
                     for n in ast.walk(s) if isinstance(n, ast.Name) and (
                         isinstance(n.ctx, ast.Store))}
  read: List[str] = [n.id for s in statement.body for n in ast.walk(s)
                     if isinstance(n, ast.Name) and isinstance(
                         n.ctx, ast.Load) and n.id not in bound]
  for name in read:
    if name in owner.params:
      continue
    for each in owner.defs.get(name, ()):
      if any(isinstance(c, ast.Call) for c in ast.walk(each.value)):
        return False
  return True
