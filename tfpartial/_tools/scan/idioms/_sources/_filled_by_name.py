"""A list kept on `self` that a method fills only with the variables of
the layers a configured list names (`if name in
self.params.layers_to_train: self.variables_to_train.append(W)`), and a
step trains: the layers not named run in the model and stay fixed. Part
of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_ADDING = {"append", "extend"}


def filled(chosen: Optional[ast.AST], scope: _scopes.Scope
           ) -> Optional[Tuple[ast.expr, _scopes.Scope]]:
  """The name test under which the methods of `scope`'s class add to the
  `self.` list `chosen`, and the method's scope, when every addition is
  under such a test; else None."""
  attribute = _names.dotted(chosen) if chosen is not None else None
  info = scope.cls
  if info is None or attribute is None or not attribute.startswith(
      "self.") or attribute.count(".") != 1:
    return None
  key = (filled, attribute, id(info.node))  # Each step of a class asks.
  return info.home.once(key, lambda: _filled(info, attribute))


def _filled(info: _scopes.ClassInfo, attribute: str
            ) -> Optional[Tuple[ast.expr, _scopes.Scope]]:
  found: Optional[Tuple[ast.expr, _scopes.Scope]] = None
  for method in info.methods.values():
    for node in _scopes.walk(method.node):
      if not isinstance(node, (ast.If, ast.Expr, ast.AugAssign)):
        continue
      if isinstance(node, ast.If) and _adds(node.body, attribute) and (
          _names_a_layer(node.test)):
        found = found or (node.test, method)
      elif not isinstance(node, ast.If) and _adds([node], attribute) and (
          not _under_a_test(method.node, node, attribute)):
        return None  # Added without a test too: the list may be all.
  return found


def _adds(body: List[ast.stmt], attribute: str) -> bool:
  for statement in body:
    value = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(value, ast.Call) and _names.call_name(
        value) in _ADDING and isinstance(value.func, ast.Attribute) and (
            _names.dotted(value.func.value) == attribute):
      return True
    if isinstance(statement, ast.AugAssign) and _names.dotted(
        statement.target) == attribute:
      return True
  return False


def _under_a_test(function: ast.AST, statement: ast.AST,
                  attribute: str) -> bool:
  return any(isinstance(n, ast.If) and _names_a_layer(n.test) and any(
      s is statement for s in n.body) for n in ast.walk(function))


def _names_a_layer(test: ast.expr) -> bool:
  """`name in self.params.layers_to_train`: a name in a configured list
  (an attribute, not a list written out)."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], ast.In)) and isinstance(
          test.left, (ast.Name, ast.Attribute)) and "name" in (
              _names.dotted(test.left) or "") and isinstance(
                  test.comparators[0], ast.Attribute)
