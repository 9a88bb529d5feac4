"""Which `with` blocks of a class name its variables: a block opened by
any call on the object's own scope (a project's `absolute_name_scope(
self.scope)`) is the object's own, whatever scopes open inside it, and
`tf.name_scope(None)` (back to the root, for summaries) opens none."""

from __future__ import annotations

import ast
from typing import Set, Union

from tfpartial._tools.scan import _names


def opens_own(statement: Union[ast.With, ast.AsyncWith], attribute: str,
              own: Set[str]) -> bool:
  """Whether a context of the block is a call given the object's scope
  attribute (`self.scope`), or a name it is made from, first."""
  for item in statement.items:
    call = item.context_expr
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
