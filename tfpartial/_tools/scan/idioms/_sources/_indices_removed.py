"""A step's list picked from all of a model's weights by indices that
are every index but some (`inds = np.delete(np.arange(len(ws)), frozen)`,
then `var_list=[ws[i] for i in inds]`; `[ws[i] for i in range(len(ws))
if i not in frozen]`): the indices removed name the weights that stay
fixed. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Every weight of a model or graph, read as an attribute.
_WHOLE_ATTRIBUTES = {"trainable_weights", "trainable_variables", "weights",
                     "variables"}
# Calls that take some indices out of all of them.
_REMOVING = {"delete", "setdiff1d", "difference"}


def some_removed(chosen: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `chosen` (or the one value its name is bound to) picks the
  weights of a whole list at every index but some."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else chosen
  if not isinstance(chosen, (ast.ListComp, ast.GeneratorExp)) or len(
      chosen.generators) != 1:
    return False
  generator = chosen.generators[0]
  element = chosen.elt
  if not isinstance(element, ast.Subscript) or not isinstance(
      generator.target, ast.Name) or not isinstance(
          element.slice, ast.Name) or (
              element.slice.id != generator.target.id) or not _whole(
                  element.value, scope):
    return False
  return any(_drops(test) for test in generator.ifs) or _removed(
      generator.iter, scope)


def _whole(container: ast.expr, scope: _scopes.Scope) -> bool:
  """All of a model's weights: `model.trainable_weights`,
  `tf.trainable_variables()`, or a name bound to one of them."""
  if isinstance(container, ast.Name):
    defs = scope.defs.get(container.id, [])
    if len(defs) != 1:
      return False
    container = defs[0].value
  container = _names.unwrapped(container)
  if isinstance(container, ast.Attribute):
    return container.attr in _WHOLE_ATTRIBUTES
  return isinstance(container, ast.Call) and _names.call_name(
      container) in _names.VARIABLE_LISTS and _names.scope_argument(
          container) is None


def _removed(indices: ast.expr, scope: _scopes.Scope) -> bool:
  """Indices made by taking some out of all (`np.delete(np.arange(n),
  frozen)`, `set(range(n)) - frozen`, `[i for i in ... if i not in
  frozen]`)."""
  if isinstance(indices, ast.Name):
    defs = scope.defs.get(indices.id, [])
    if len(defs) != 1:
      return False
    indices = defs[0].value
  indices = _names.unwrapped(indices)
  if isinstance(indices, ast.Call) and _names.call_name(
      indices) in _REMOVING:
    return True
  if isinstance(indices, ast.BinOp) and isinstance(indices.op, ast.Sub):
    return True
  return isinstance(indices, (ast.ListComp, ast.GeneratorExp)) and any(
      _drops(test) for g in indices.generators for test in g.ifs)


def _drops(test: ast.expr) -> bool:
  """`i not in frozen`."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], ast.NotIn)) and isinstance(test.left, ast.Name)
