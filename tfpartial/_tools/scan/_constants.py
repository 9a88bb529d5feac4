"""Whether a mask is a constant the port can hand to `tfpartial`: built
from literals and NumPy only, or `tf.constant` of such."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_NUMPY = {"np", "numpy", "onp"}


def is_constant(node: ast.AST, scope: _scopes.Scope, depth: int = 0) -> bool:
  """Whether `node` is a value known before the program runs.

  >>> module = _scopes.collect(ast.parse("M = np.eye(2, dtype=bool)"))
  >>> is_constant(ast.parse("M.astype(np.float32)").body[0].value, module)
  True
  >>> is_constant(ast.parse("tf.placeholder(tf.float32)").body[0].value,
  ...             module)
  False
  """
  if depth > 20:
    return False
  def again(child: ast.AST) -> bool:
    return is_constant(child, scope, depth + 1)

  if isinstance(node, ast.Constant):
    return True
  if isinstance(node, (ast.List, ast.Tuple)):
    return all(again(e) for e in node.elts)
  if isinstance(node, (ast.BinOp)):
    return again(node.left) and again(node.right)
  if isinstance(node, ast.UnaryOp):
    return again(node.operand)
  if isinstance(node, ast.Subscript):
    return again(node.value)
  if isinstance(node, ast.Name):
    values = _defs(node.id, scope)
    return values is None or bool(values) and all(again(v) for v in values)
  if isinstance(node, ast.Attribute):
    return (_names.dotted(node) or "").split(".")[0] in _NUMPY | {"tf"}
  if isinstance(node, ast.Call):
    name = _names.call_name(node)
    base = node.func.value if isinstance(node.func, ast.Attribute) else None
    arguments = [*node.args, *(k.value for k in node.keywords)]
    if name == "constant" or name == "astype" and base is not None and (
        again(base)):
      return all(again(a) for a in arguments)
    top = (_names.dotted(base) or "").split(".")[0] if base else ""
    return top in _NUMPY and all(again(a) for a in arguments)
  return False


def _defs(name: str, scope: _scopes.Scope) -> Optional[List[ast.expr]]:
  """The values `name` is assigned where it is seen; None for a builtin or
  an import (`bool`, `np`); [] for a parameter."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if name in place.params:
      return []
    if name in place.defs:
      return [d.value for d in place.defs[name]]
    place = place.parent
  return None
