"""A variable made by the function that writes it, as a scratch buffer:
`logits_mask = tf.Variable(tf.ones_like(mask))`, then
`logits_mask.scatter_nd_update(indices, zeros)` in the same block, the
write's result dropped (a contrastive loss's mask of all but each anchor,
part thirty-four). Each run of the write follows the making of a new
variable, so it sets that variable's first value, not a trained one
back: no element is kept fixed while the model trains. Not a variable
made once at module level or by a `tf.function` (made at its first trace
only, then written at every call), nor a write kept to run later (`op =
v.scatter_nd_update(...)`, run in a session's loop), nor one in a loop
the making is outside of."""

from __future__ import annotations

import ast
from typing import Iterator, List

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def made_here(call: ast.Call, scope: _scopes.Scope, target: ast.AST) -> bool:
  """Whether `call` writes a name its plain function binds once, to a
  new `Variable(...)` made earlier in the same statement list as the
  write's statement, which drops the write's result."""
  function = scope.node
  if not isinstance(target, ast.Name) or not isinstance(
      function, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(
          (_names.dotted(d.func if isinstance(d, ast.Call) else d) or "")
          .endswith("function") for d in function.decorator_list):
    return False
  bound = list(scope.defs.get(target.id, ()))
  if len(bound) != 1 or not isinstance(bound[0].value, ast.Call) or (
      _names.call_name(bound[0].value) != "Variable"):
    return False
  made = bound[0].value
  for block in _blocks(function):
    making = next((i for i, s in enumerate(block) if isinstance(
        s, ast.Assign) and s.value is made), None)
    if making is None:
      continue
    return any(isinstance(s, ast.Expr) and s.value is call
               for s in block[making + 1:])
  return False


def _blocks(function: ast.AST) -> Iterator[List[ast.stmt]]:
  """Every statement list of `function`, its own body first, not those
  of the functions and classes it defines."""
  stack: List[ast.AST] = [function]
  while stack:
    node = stack.pop()
    for field in ("body", "orelse", "finalbody"):
      block = getattr(node, field, None)
      if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
        yield block
        stack += [s for s in block if not isinstance(s, _names.DEFINITIONS)]
    stack += list(getattr(node, "handlers", []))
