"""Whether a write moves every weight part of the way toward its trained
value: a meta-learning outer step (Reptile's `new[i] = old[i] + (new[i] -
old[i]) * eps` on the weights read out after the inner steps, then
`set_weights(new)`), Lookahead's slow weights. Each element written reads
its own trained value, scaled by a number the same for every element:
every element moves and none is kept, so it is an update of the whole
model, not saved values put into the elements a mask chooses. A write of
a slice (`new[i][:5] = old[i][:5]`) or one weighted by a per-variable
array (`masks[i]`) is not one. Part of the writes `write-back` reads."""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _scopes

# The arithmetic of an interpolation.
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def toward_trained(scope: _scopes.Scope, value: ast.AST) -> bool:
  """Whether `value` is a local list every store into which
  (`value[i] = ...`, `i` a loop's index) interpolates the element it
  replaces with one other list's element at the same index.

  >>> import ast
  >>> f = ast.parse('''
  ... def f(model, old, eps):
  ...   new = model.get_weights()
  ...   for i in range(len(new)):
  ...     new[i] = old[i] + (new[i] - old[i]) * eps
  ...   model.set_weights(new)''')
  >>> toward_trained(list(_scopes.collect(f).all())[1], ast.Name("new"))
  True
  """
  if not isinstance(value, ast.Name):
    return False
  stores = [n for n in scope.nodes if isinstance(n, ast.Assign) and any(
      isinstance(t, ast.Subscript) and _root(t) == value.id
      for t in n.targets)]
  return bool(stores) and all(
      len(n.targets) == 1 and _interpolates(n.targets[0], n.value, value.id)
      for n in stores)


def _interpolates(target: ast.expr, stored: ast.expr, own: str) -> bool:
  """Whether `own[i] = stored` mixes `own[i]` with one other `x[i]` by
  arithmetic and scalars."""
  if not (isinstance(target, ast.Subscript) and isinstance(
      target.value, ast.Name) and isinstance(target.slice, ast.Name)):
    return False
  index = target.slice.id
  others: Set[str] = set()
  for node in ast.walk(stored):
    if isinstance(node, ast.Subscript):
      name = _element(node, index)
      if name is None:
        return False  # A slice, a mask's element: a part chosen.
      others.add(name)
    elif isinstance(node, ast.BinOp) and not isinstance(node.op, _OPS):
      return False
    elif isinstance(node, ast.Call):
      return False
  return own in others and len(others) == 2


def _element(node: ast.Subscript, index: str) -> Optional[str]:
  """`x` of `x[index]`, else None."""
  if isinstance(node.value, ast.Name) and isinstance(
      node.slice, ast.Name) and node.slice.id == index:
    return node.value.id
  return None


def _root(node: ast.AST) -> Optional[str]:
  while isinstance(node, (ast.Subscript, ast.Attribute)):
    node = node.value
  return node.id if isinstance(node, ast.Name) else None
