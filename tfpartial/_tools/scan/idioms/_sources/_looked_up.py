"""A list written by hand of variables looked up by their names
(`[tf.get_variable('model/fc3/weights'), tf.get_variable('model/fc3/
biases')]` in a scope opened with `reuse=True`): the model built them,
the list names the few that train, and the rest of the model stays fixed.
Found at the step's list, or in the function whose result the step
trains (a model module's `get_train_vars()`). Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Calls that look a variable up by its name.
_LOOKUPS = {"get_variable", "get_tensor_by_name"}
# Keywords that make `get_variable` create a variable, not find one.
_CREATING = {"shape", "initializer", "dtype", "trainable"}


def by_name(chosen: ast.AST, scope: _scopes.Scope) -> Optional[ast.expr]:
  """The list of variables looked up by name that `chosen` is (or the
  one value its name holds), else None."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else chosen
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not chosen.elts:
    return None
  if all(_looked_up(element) for element in chosen.elts) and any(
      _in_a_scope(element) for element in chosen.elts):
    return chosen
  return None


def _looked_up(node: ast.expr) -> bool:
  """`tf.get_variable('scope/name')` with nothing to create it from."""
  return isinstance(node, ast.Call) and _names.call_name(
      node) in _LOOKUPS and len(node.args) == 1 and isinstance(
          node.args[0], ast.Constant) and isinstance(
              node.args[0].value, str) and not any(
                  k.arg in _CREATING for k in node.keywords)


def _in_a_scope(node: ast.expr) -> bool:
  """A name under a scope (`model/fc3/weights`): one of a model's."""
  return isinstance(node, ast.Call) and "/" in str(
      getattr(node.args[0], "value", ""))
