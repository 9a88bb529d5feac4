"""Where a helper's own choice is, when it takes the variables of the
network its caller names and narrows them (`train_vars =
tf.trainable_variables(scope=scope)`, then, under an option, `train_vars
= [v for v in train_vars if v not in exclude]`): the scope is the
caller's per-network list (an actor's, a critic's, a policy's, each
trained), the narrowing is what leaves variables out. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def narrowing(node: ast.AST, scope: _scopes.Scope) -> Optional[ast.expr]:
  """For `node`, a variable list by a scope that is a parameter of
  `scope`'s function, assigned to a name: the later comprehension over
  that name with a test that narrows it, if any."""
  if not isinstance(node, ast.Call):
    return None
  chosen = _names.scope_argument(node)
  if not isinstance(chosen, ast.Name) or chosen.id not in scope.params:
    return None
  name = next((n for n, defs in scope.defs.items()
               if any(d.value is node for d in defs)), None)
  if name is None:
    return None
  return next((d.value for d in scope.defs[name]
               if d.replaces and _narrows(d.value, name)), None)


def _narrows(value: ast.expr, name: str) -> bool:
  """`[v for v in name if test]`."""
  return isinstance(value, ast.ListComp) and len(value.generators) == 1 and (
      isinstance(value.generators[0].iter, ast.Name)) and (
          value.generators[0].iter.id == name) and bool(
              value.generators[0].ifs)
