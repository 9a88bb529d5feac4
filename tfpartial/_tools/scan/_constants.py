"""Whether a mask is a constant the port can hand to `tfpartial`: built
from literals and NumPy only, or `tf.constant` of such."""

from __future__ import annotations

import ast
from typing import Callable, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_NUMPY = {"np", "numpy", "onp"}

# What a name imported from another module of the project is assigned
# there, with that module's scope (`Project.imported_values`); None when
# the name is not such an import.
Imported = Callable[[_scopes.Scope, str],
                    Optional[List[Tuple[ast.expr, _scopes.Scope]]]]


def is_constant(node: ast.AST, scope: _scopes.Scope, depth: int = 0,
                imported: Optional[Imported] = None) -> bool:
  """Whether `node` is a value known before the program runs. A name
  imported from the project's own module is what that module assigns
  when `imported` can say (`from masks import mask` of a `tf.Variable`
  is not constant); other imports are taken as constants.

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
    return is_constant(child, scope, depth + 1, imported)

  if isinstance(node, ast.Constant):
    return True
  if isinstance(node, (ast.List, ast.Tuple)):
    return all(again(e) for e in node.elts)
  if isinstance(node, ast.Dict):
    return all(again(e) for e in (*node.keys, *node.values) if e is not None)
  if isinstance(node, (ast.BinOp)):
    return again(node.left) and again(node.right)
  if isinstance(node, ast.UnaryOp):
    return again(node.operand)
  if isinstance(node, ast.Subscript):
    return again(node.value)
  if isinstance(node, ast.Name):
    values = _defs(node.id, scope)
    there = imported(scope, node.id) if values is None and (
        imported is not None) else None
    if there is not None:
      return bool(there) and all(
          is_constant(v, s, depth + 1, imported) for v, s in there)
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
