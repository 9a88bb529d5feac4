"""Slices of a transposed sequence (`zip(*towers)`): fields of every
item when the towers' items are tuples a tower function returns (the
gradients each tower returns, whole), some variables when the sequence
holds `compute_gradients` lists (each item of the transpose is one
variable's pairs across the towers)."""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def transposed(node: ast.AST) -> bool:
  """Whether `node` transposes one sequence (`zip(*towers)`, maybe in
  `list(...)`): a slice of it picks fields of every item, unless the
  items are `compute_gradients` lists (`rows_of_pairs`).

  >>> transposed(ast.parse("list(zip(*towers))").body[0].value)
  True
  >>> transposed(ast.parse("zip(grads, tvars)").body[0].value)
  False
  """
  while isinstance(node, ast.Call) and _names.call_name(node) in {
      "list", "tuple"} and len(node.args) == 1:
    node = node.args[0]
  return isinstance(node, ast.Call) and _names.call_name(node) == "zip" and (
      len(node.args) == 1) and isinstance(node.args[0], ast.Starred)


def rows_of_pairs(node: ast.AST, scope: _scopes.Scope,
                  pairs: Callable[[ast.expr], bool],
                  callee: Callable[[ast.Call], Optional[ast.AST]]) -> bool:
  """Whether the sequence `zip(*seq)` transposes is a list of
  `compute_gradients` lists (`tower_grads.append(opt.compute_gradients(
  loss))`, or of a helper of the project (`callee`) that returns one):
  each item of the transpose is then one variable's pairs across the
  towers, and a slice keeps some variables."""
  while isinstance(node, ast.Call) and _names.call_name(node) in {
      "list", "tuple"} and len(node.args) == 1:
    node = node.args[0]
  seq = node.args[0].value if isinstance(node, ast.Call) and node.args and (
      isinstance(node.args[0], ast.Starred)) else None
  name = _names.dotted(seq) if seq is not None else None
  if name is None:
    return False
  for each in scope.nodes:
    if isinstance(each, ast.Call) and isinstance(
        each.func, ast.Attribute) and each.func.attr in {
            "append", "extend"} and each.args and _names.dotted(
                each.func.value) == name and _a_pairs_list(
                    each.args[0], scope, pairs, callee):
      return True
  return False


def _a_pairs_list(node: ast.expr, scope: _scopes.Scope,
                  pairs: Callable[[ast.expr], bool],
                  callee: Callable[[ast.Call], Optional[ast.AST]]) -> bool:
  """Whether `node` (or the one value its name is bound to) is a
  `compute_gradients` list of pairs, or the call of a helper whose every
  return is one; another call (a tower function, its tuple of fields)
  is not."""
  if isinstance(node, ast.Name) and len(scope.defs.get(node.id, [])) == 1:
    made = getattr(scope.defs[node.id][0], "value", None)
    node = made if isinstance(made, ast.expr) else node
  if isinstance(node, ast.Call):
    return _names.call_name(node) == "compute_gradients" or (
        _returns_pairs(callee(node)))
  return pairs(node)


def _returns_pairs(function: Optional[ast.AST]) -> bool:
  """Whether every `return` of `function` (its own, not a nested
  function's) that gives a value gives a `compute_gradients` call, or a
  name the function binds to one alone and never again (a loop, `:=`,
  `as`), and one does. A way out with no value (falling off the end, a
  bare `return`, `return None`) is no other tower: the transpose of a
  list holding None raises, so a run that works got pairs from each.

  >>> _returns_pairs(ast.parse(
  ...     "def f(o, l):\\n  g = o.compute_gradients(l)\\n  return g").body[0])
  True
  >>> _returns_pairs(ast.parse(
  ...     "def f(o, l):\\n  return o.compute_gradients(l), l").body[0])
  False
  >>> _returns_pairs(ast.parse(
  ...     "def f(o, l):\\n  if l:\\n    return o.compute_gradients(l)"
  ...     ).body[0])
  True
  """
  if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  returns: List[ast.expr] = []
  bound: Dict[str, List[Optional[ast.expr]]] = {}
  for node in _own_nodes(function):
    if isinstance(node, ast.Return) and node.value is not None and not (
        _none(node.value)):
      returns.append(node.value)
    for target, value in _bindings(node):
      for name in ast.walk(target):
        if isinstance(name, ast.Name):
          bound.setdefault(name.id, []).append(
              value if target is name else None)
  return bool(returns) and all(
      _a_gradients_call(value) or isinstance(value, ast.Name) and (
          len(bound.get(value.id, [])) == 1) and _a_gradients_call(
              bound[value.id][0]) for value in returns)


def _bindings(node: ast.AST
              ) -> Iterator[Tuple[ast.expr, Optional[ast.expr]]]:
  """(target, the value bound to it as a whole or None) of each name
  `node` binds: assignments, loop targets, `:=`, `with ... as`, `def`
  (a comprehension's names are its own)."""
  if isinstance(node, ast.Assign):
    yield from ((target, node.value) for target in node.targets)
  elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For,
                         ast.AsyncFor, ast.NamedExpr)):
    yield node.target, None
  elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef)):
    yield ast.Name(node.name, ast.Store()), None
  elif isinstance(node, ast.withitem) and node.optional_vars is not None:
    yield node.optional_vars, None
  elif isinstance(node, ast.ExceptHandler) and node.name:
    yield ast.Name(node.name, ast.Store()), None
  elif isinstance(node, ast.Delete):
    yield from ((target, None) for target in node.targets)


def _none(value: ast.expr) -> bool:
  """`None` written out (`return None`)."""
  return isinstance(value, ast.Constant) and value.value is None


def _a_gradients_call(node: Optional[ast.AST]) -> bool:
  return isinstance(node, ast.Call) and (
      _names.call_name(node) == "compute_gradients")


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
  """The nodes of `function`'s body, not those of functions, lambdas or
  classes it defines."""
  todo = list(ast.iter_child_nodes(function))
  while todo:
    node = todo.pop()
    yield node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.Lambda, ast.ClassDef)):
      todo.extend(ast.iter_child_nodes(node))
