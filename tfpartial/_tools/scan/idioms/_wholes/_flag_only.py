"""Whether a loss's step beside another loss's (a GAN's generator beside
its discriminator) has the same loss trained on one more list only under
a flag: `train_g = minimize(loss_g, var_list=model_vars('g_model'))`,
then `if opts.train_app_encoder: minimize(loss_g, var_list=model_vars(
'appearance_net'))`. With the flag off the extra list (a pretrained
encoder the generator runs) stays fixed while the generator trains: the
two halves of the GAN do not train it between them. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _flagged

# A step: its call, scope, loss and list.
Other = Tuple[ast.Call, _scopes.Scope, Optional[str], Optional[ast.AST]]


def extended_under_flag(call: ast.Call, scope: _scopes.Scope,
                        loss: Optional[str], others: List[Other]) -> bool:
  """Whether an `if` testing a flag in `scope`'s function, not holding
  `call`, holds another step of `scope` and `loss` whose list no step
  outside such an `if` trains."""
  if loss is None:
    return False
  for node in flags(scope):
    if _holds(node, call):
      continue
    extra = [ast.unparse(chosen) for other, where, other_loss, chosen
             in others if other is not call and where is scope and (
                 other_loss == loss) and chosen is not None and _holds(
                     node, other)]
    trained = {ast.unparse(chosen) for other, _, _, chosen in others
               if chosen is not None and not _holds(node, other)}
    if any(text not in trained for text in extra):
      return True
  return False


def flags(scope: _scopes.Scope) -> List[ast.If]:
  """The `if`s without an `else` testing a flag in `scope`'s function,
  listed once per function."""
  home = scope
  while home.cls is None and home.parent is not None and isinstance(
      home.parent.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    home = home.parent
  return home.once((flags, 0, 0), lambda: [
      node for node in _scopes.walk(home.node) if isinstance(node, ast.If)
      and not node.orelse and _flagged.a_flag(node.test)])


def _holds(node: ast.If, call: ast.AST) -> bool:
  """Whether the body of `node` spans `call`."""
  at = (getattr(call, "lineno", 0), getattr(call, "col_offset", 0))
  first, last = node.body[0], node.body[-1]
  return (first.lineno, first.col_offset) <= at <= (
      getattr(last, "end_lineno", 0) or 0,
      getattr(last, "end_col_offset", 0) or 0)
