"""A step's list by the value its name holds at the step, when the
function binds that name to several lists (`var_list = gen_vars +
im_vars; ... compute_gradients(gen_loss, var_list=var_list)`, then
`var_list = discrim_vars; ... compute_gradients(discrim_loss,
var_list=var_list)`): two lists, not one trained by two losses. A GAN's
halves are told apart so, however the code names them. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _scopes


def at_step(var_list: Optional[ast.AST], call: ast.AST,
            scope: _scopes.Scope) -> Optional[ast.AST]:
  """The value a list named by a local name rebound in `scope` holds at
  `call` (the last binding before it), else `var_list` itself."""
  if not isinstance(var_list, ast.Name):
    return var_list
  defs = scope.defs.get(var_list.id, ())
  if len(defs) < 2 or not all(d.replaces and d.part is None for d in defs):
    return var_list
  at = (getattr(call, "lineno", 0), getattr(call, "col_offset", 0))
  before = sorted((d for d in defs if d.end <= at), key=lambda d: d.end)
  return before[-1].value if before else var_list
