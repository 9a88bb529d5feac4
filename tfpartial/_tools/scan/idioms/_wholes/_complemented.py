"""Whether a filter is handed on together with its own complement: a
list of lists given to a call (`list_train_vars=[pretrained, rest]`,
one learning rate per list) holds the filtered list and the rest of the
variables (`rest = list(set(tf.trainable_variables()) -
set(pretrained))`, or `[v for v in all if v not in pretrained]`):
between them every variable trains, each part at its own rate."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _scopes


def passed_with_rest(node: ast.AST, home: _scopes.Scope) -> bool:
  """Whether `node`, assigned once to a name in `home`, is passed inside
  a list display, as an argument of a call there, beside a name bound
  once to its complement."""
  name = _bound_to(node, home)
  if name is None:
    return False
  for call in home.nodes:
    if not isinstance(call, ast.Call):
      continue
    for given in [*call.args, *(k.value for k in call.keywords)]:
      if isinstance(given, (ast.List, ast.Tuple)) and any(
          isinstance(e, ast.Name) and e.id == name for e in given.elts) and (
              any(isinstance(e, ast.Name) and _complement_of(
                  e.id, name, home) for e in given.elts)):
        return True
  return False


def _bound_to(node: ast.AST, home: _scopes.Scope) -> Optional[str]:
  """The name `node` is the one value of, in `home`."""
  for name, defs in home.defs.items():
    if len(defs) == 1 and defs[0].value is node and defs[0].replaces:
      return name
  return None


def _complement_of(other: str, name: str, home: _scopes.Scope) -> bool:
  """Whether `other` is bound once to `set(all) - set(name)` (in `list()`
  or not) or to `[v for v in all if v not in name]`."""
  defs = home.defs.get(other, [])
  if len(defs) != 1:
    return False
  value = _unwrapped(defs[0].value)
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub):
    right = _unwrapped(value.right)
    return isinstance(right, ast.Name) and right.id == name
  if isinstance(value, ast.ListComp) and len(value.generators) == 1:
    tests = value.generators[0].ifs
    return len(tests) == 1 and isinstance(tests[0], ast.Compare) and len(
        tests[0].ops) == 1 and isinstance(tests[0].ops[0], ast.NotIn) and (
            isinstance(tests[0].comparators[0], ast.Name)) and (
                tests[0].comparators[0].id == name)
  return False


def _unwrapped(node: ast.expr) -> ast.expr:
  """`set(x)`, `list(x)`: x."""
  while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
      node.func.id in {"set", "list", "tuple", "frozenset"}) and len(
          node.args) == 1:
    node = node.args[0]
  return node
