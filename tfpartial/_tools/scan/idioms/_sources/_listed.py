"""A step that trains a hand-written list of variables (`var_list=
[ID_table]`) beside a step of its function that minimises the same loss
over every variable (`minimize(warm_loss)`): the model is trained whole by
one and only in part by the other, which leaves the rest frozen (a
warm-up that updates only the new item embeddings)."""

from __future__ import annotations

import ast
from typing import Callable, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _graphs


def beside_whole(chosen: ast.AST, scope: _scopes.Scope, call: ast.Call,
                 steps: Callable[[ast.Call], bool],
                 var_list_of: Callable[[ast.Call], Optional[ast.AST]]
                 ) -> bool:
  """Whether `call` trains the hand-written list `chosen` (names only)
  while another step of `scope` (`steps` tells one) minimises the same
  loss with no list, in the same graph (a notebook's next exercise, after
  `tf.reset_default_graph()`, minimises its own `f`)."""
  listed: Optional[ast.AST] = chosen
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    listed = defs[0].value if len(defs) == 1 else None
  if not isinstance(listed, (ast.List, ast.Tuple)) or not listed.elts or (
      not all(isinstance(e, ast.Name) for e in listed.elts)):
    return False
  loss = _loss(call)
  key = (beside_whole, 0, 0)
  whole = scope.judged.get(key)
  if not isinstance(whole, set):
    # Worked out once per function: a long one holds many steps.
    whole = scope.judged[key] = {
        (_graphs.section(scope, n), _names.call_name(n), _loss(n))
        for n in scope.nodes
        if isinstance(n, ast.Call) and steps(n) and var_list_of(n) is None}
  return loss is not None and (_graphs.section(scope, call),
                               _names.call_name(call), loss) in whole


def _loss(call: ast.Call) -> Optional[str]:
  """A step's loss as written (its first argument)."""
  return ast.unparse(call.args[0]) if call.args else None
