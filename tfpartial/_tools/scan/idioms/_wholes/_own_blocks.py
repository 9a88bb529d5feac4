"""Which `with` blocks of a class name its variables: a block opened by
any call on the object's own scope (a project's `absolute_name_scope(
self.scope)`) is the object's own, whatever scopes open inside it, and
`tf.name_scope(None)` (back to the root, for summaries) opens none."""

from __future__ import annotations

import ast
from typing import Set, Union

from tfpartial._tools.scan import _names

# What opens a variable scope, the one `get_variable_scope()` returns.
_VARIABLE_SCOPES = {"variable_scope", "VariableScope"}


def opens_own(statement: Union[ast.With, ast.AsyncWith], attribute: str,
              own: Set[str]) -> bool:
  """Whether a context of the block is a call given the object's scope
  attribute (`self.scope`), or a name it is made from, first; or the
  scope it opens is what the attribute keeps: bound by `as` to a name it
  is made from (`with tf.variable_scope('weights') as param_scope: ...`,
  `self.param_scope = param_scope`), or read inside it (`self.scope =
  tf.get_variable_scope().name`)."""
  if _reads_opened(statement, attribute):
    return True
  for item in statement.items:
    call = item.context_expr
    if isinstance(item.optional_vars, ast.Name) and isinstance(
        call, ast.Call) and _names.call_name(
            call) in _names.TF_SCOPES_OR_CLASS and (
                item.optional_vars.id in own):
      return True
    first = call.args[0] if isinstance(call, ast.Call) and call.args \
        else None
    if first is not None and (_names.dotted(first) == f"self.{attribute}" or (
        isinstance(first, ast.Name) and first.id in own)):
      return True
  return False


def names_nothing(call: ast.Call) -> bool:
  """Whether the scope call opens no scope (`tf.name_scope(None)`)."""
  return _names.call_name(call) == "name_scope" and len(call.args) == 1 and (
      isinstance(call.args[0], ast.Constant)) and call.args[0].value is None


def _reads_opened(statement: Union[ast.With, ast.AsyncWith],
                  attribute: str) -> bool:
  """Whether a statement of the block itself (not of a block inside it,
  save a `name_scope` block) sets `self.<attribute>` from
  `get_variable_scope()`: the scope that block opens, when it opens a
  variable scope (inside a `name_scope` block that call returns the
  variable scope around the block, not one of its own)."""
  if not any(isinstance(i.context_expr, ast.Call) and _names.call_name(
      i.context_expr) in _VARIABLE_SCOPES for i in statement.items):
    return False
  body = list(statement.body)
  while body:
    each = body.pop()
    if isinstance(each, (ast.With, ast.AsyncWith)) and all(
        isinstance(i.context_expr, ast.Call) and _names.call_name(
            i.context_expr) == "name_scope" for i in each.items):
      body += each.body
    elif isinstance(each, ast.Assign) and len(each.targets) == 1 and (
        _names.dotted(each.targets[0]) == f"self.{attribute}") and any(
            isinstance(n, ast.Call) and _names.call_name(
                n) == "get_variable_scope" for n in ast.walk(each.value)):
      return True
  return False
