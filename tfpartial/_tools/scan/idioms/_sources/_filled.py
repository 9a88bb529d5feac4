"""Whether an `if` that tests a function's variables parameter fills it
in (`if var_list is None: var_list = tf.trainable_variables()`): a
default, not a filter; an `if` that only reads it (`if var_list is not
None: log(len(var_list))`) leaves a filter made before it standing."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _scopes


def fills(test: ast.If, name: str) -> bool:
  """Whether the `if` assigns `name` in one of its arms.

  >>> fills(ast.parse("if v is None:\\n  v = all()").body[0], "v")
  True
  >>> fills(ast.parse("if v is not None:\\n  log(v)").body[0], "v")
  False
  """
  return any(isinstance(n, ast.Name) and n.id == name and isinstance(
      n.ctx, ast.Store) for part in (*test.body, *test.orelse)
             for n in _scopes.walk(part))
