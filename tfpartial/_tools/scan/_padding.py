"""Zeros appended after a whole gradient: padding to a size, not a part
of it zeroed. `flat = tf.reshape(grad, [-1]); padded = tf.concat([flat,
tf.zeros(pad_len)], axis=0)` lengthens the gradient (to pack it into
rows for encryption, to batch it) and a later step cuts the padding
off again: no element of the variable loses its gradient. A gradient
rebuilt from a slice of itself and zeros (`concat([g[:n], zeros_like(
g[n:])])`) or zeros put before it replaces a part, and stays a mask.
Read by `_calls` where a concatenation joins a gradient and zeros."""

from __future__ import annotations

import ast
from typing import Callable, List

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def appended(elements: List[ast.expr], holds_gradient: List[bool],
             scope: _scopes.Scope, zero: Callable[[ast.AST, _scopes.Scope],
                                                  bool]) -> bool:
  """Whether the joined `elements` are whole gradients (no slice of one)
  followed only by zeros of a length (`tf.zeros(n)`, not shaped like a
  tensor); `holds_gradient` tells which elements carry a gradient."""
  last = max((i for i, g in enumerate(holds_gradient) if g), default=-1)
  if last < 0 or last == len(elements) - 1:
    return False
  tail = elements[last + 1:]
  if not all(zero(e, scope) and not _shaped_like(e, scope) for e in tail):
    return False
  return not any(zero(e, scope) for e in elements[:last]) and not any(
      _sliced(e, scope) for e, g in zip(elements, holds_gradient) if g)


def _value(node: ast.expr, scope: _scopes.Scope) -> ast.expr:
  """What a local name bound once holds, else `node`."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    if len(defs) == 1:
      return defs[0].value
  return node


def _sliced(node: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether `node` (or what its name holds) takes a slice of something."""
  return any(isinstance(n, ast.Subscript)
             for n in ast.walk(_value(node, scope)))


def _shaped_like(node: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether zeros are made in the shape of a tensor (`zeros_like(x)`)."""
  value = _value(node, scope)
  return isinstance(value, ast.Call) and _names.call_name(value) in {
      "zeros_like", "ZerosLike"}
