"""A step's list picked from all of a model's weights by indices that
are every index but some (`inds = np.delete(np.arange(len(ws)), frozen)`,
then `var_list=[ws[i] for i in inds]`; `[ws[i] for i in range(len(ws))
if i not in frozen]`): the indices removed name the weights that stay
fixed. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional
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
  removed = [d for d in map(_dropped, generator.ifs) if d is not None] or (
      _removed(generator.iter, scope))
  return bool(removed) and not any(
      _picked_by(element.value, each, scope) for each in removed)


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


def _removed(indices: ast.expr, scope: _scopes.Scope) -> List[ast.expr]:
  """What indices made by taking some out of all take out
  (`np.delete(np.arange(n), frozen)`, `set(range(n)) - frozen`, `[i for
  i in ... if i not in frozen]`: `frozen`); empty for other indices."""
  if isinstance(indices, ast.Name):
    defs = scope.defs.get(indices.id, [])
    if len(defs) != 1:
      return []
    indices = defs[0].value
  indices = _names.unwrapped(indices)
  if isinstance(indices, ast.Call) and _names.call_name(
      indices) in _REMOVING and len(indices.args) == 2:
    return [indices.args[1]]
  if isinstance(indices, ast.BinOp) and isinstance(indices.op, ast.Sub):
    return [indices.right]
  if isinstance(indices, (ast.ListComp, ast.GeneratorExp)):
    return [d for g in indices.generators for d in map(_dropped, g.ifs)
            if d is not None]
  return []


def _picked_by(container: ast.expr, removed: ast.expr,
               scope: _scopes.Scope) -> bool:
  """Whether another list of the function picks the same weights at the
  indices taken out (two optimizers splitting the layers): then nothing
  is left out."""
  text, container_text = ast.dump(removed), ast.dump(container)
  for node in _scopes.walk(scope.node):
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(
        node.generators) == 1 and ast.dump(
            node.generators[0].iter) == text and isinstance(
                node.elt, ast.Subscript) and ast.dump(
                    node.elt.value) == container_text:
      return True
  return False


def _dropped(test: ast.expr) -> Optional[ast.expr]:
  """What `i not in frozen` drops (`frozen`), else None."""
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], ast.NotIn)) and isinstance(test.left, ast.Name):
    return test.comparators[0]
  return None
