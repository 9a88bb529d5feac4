"""A list a function is handed, trained beside everything: `self.solver_op
= self.get_solver_op()` (every variable) and, in the same function, `self.
fc_solver_op = self.get_solver_op(var_list=fc_vars)` of the same loss.
Two train ops of one loss, one over the whole graph, make the handed list
a part trained alone (a head trained first, on features the rest gives
fixed): what it leaves out stays fixed while that op runs. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels

# Another step: its call, scope, list, loss and graph section.
Other = Tuple[ast.Call, _scopes.Scope, Optional[ast.AST], Optional[str], int]


def handed(call: ast.Call, scope: _scopes.Scope, var_list: Optional[ast.AST],
           labels: Labels, loss: Optional[str], section: int,
           others: List[Other]) -> bool:
  """Whether the step `call` trains a parameter of its function that
  nothing shows to be variables of its own choosing, beside a step of
  the same function, callee and loss over every variable."""
  if not isinstance(var_list, ast.Name) or var_list.id not in scope.params or (
      set(labels) - {"param"}) or _names.call_name(call) in {
          "apply_gradients", "gradients", "gradient"}:
    return False
  return any(
      home is scope and chosen is None and other is not call and (
          _names.call_name(other) == _names.call_name(call)) and (
              other_loss == loss) and other_section == section
      for other, home, chosen, other_loss, other_section in others)
