"""The number a straight-through cut's bound stands for, where it is a
name: `tf.abs(w) <= self.clip` with `self.clip = 1.0` the one assignment
of the attribute in its class (in `__init__`), or `tf.abs(w) <
clip_value` with `clip_value=1.0` a parameter's default that no call
passes anything but a number. A bound read this way counts as the
number written there (`_custom_gradients`); any other stays unknown,
maybe tiny, a float-safe zero test.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

Resolve = Callable[[ast.expr], ast.expr]


def resolver(analysis: Analysis, grad: _scopes.Scope) -> Resolve:
  """`bound -> the number it stands for` seen from the gradient function
  `grad` (`bound` itself where it is no name read this way); each name
  read once.

  >>> module = _scopes.collect(ast.parse("x = 1"))
  >>> resolve = resolver(None, module)
  >>> ast.unparse(resolve(ast.parse("1e-8", mode="eval").body))
  '1e-08'
  """
  memo: Dict[str, Optional[ast.expr]] = {}

  def resolve(bound: ast.expr) -> ast.expr:
    name = _names.dotted(bound) if isinstance(
        bound, (ast.Name, ast.Attribute)) else None
    if name is None:
      return bound
    if name not in memo:
      memo[name] = _parameter(analysis, grad, name) if "." not in name else (
          _attribute(grad, name))
    return memo[name] or bound

  return resolve


def _number(node: Optional[ast.expr]) -> Optional[float]:
  """The number `node` writes (`1.0`, `-1`), or None."""
  sign = 1.0
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
    node, sign = node.operand, -1.0
  if isinstance(node, ast.Constant) and isinstance(
      node.value, (int, float)) and not isinstance(node.value, bool):
    return sign * node.value
  return None


def _attribute(grad: _scopes.Scope, name: str) -> Optional[ast.expr]:
  """The number `self.x` holds: its class assigns it once, in
  `__init__`, a number written there."""
  if name.count(".") != 1 or not name.startswith("self."):
    return None
  method = grad
  while method.cls is None and method.parent is not None:
    method = method.parent
  cls = method.cls
  if cls is None:
    return None
  assigned = cls.attributes.get(name, [])
  if len(assigned) != 1:
    return None
  value, where = assigned[0]
  if where.name != "__init__" or where.cls is not cls:
    return None
  return value if _number(value) is not None else None


def _parameter(analysis: Analysis, grad: _scopes.Scope, name: str
               ) -> Optional[ast.expr]:
  """The smallest number the parameter `name` (of `grad`'s function or
  one around it) holds: its default and what every call passes, each a
  number written there."""
  scope: Optional[_scopes.Scope] = grad
  while scope is not None and scope.parent is not None:
    if name in scope.defs:
      return None  # Assigned in the function: not the parameter alone.
    if name in scope.params:
      break
    scope = scope.parent
  if scope is None or scope.parent is None or not isinstance(
      scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  held = _held(analysis, scope.node, name)
  numbers = [(abs(n), value) for value in held
             for n in [_number(value)] if n is not None]
  if not held or len(numbers) < len(held):
    return None
  return min(numbers, key=lambda pair: pair[0])[1]


def _held(analysis: Analysis, function: ast.FunctionDef | ast.AsyncFunctionDef,
          name: str) -> List[ast.expr]:
  """The default of the parameter `name` and what each call of
  `function`'s name in the project passes it; [] where one is unknown
  (no default, a `*args` or `**kwargs` passed)."""
  args = function.args
  positional = [*args.posonlyargs, *args.args]
  defaults = dict(zip([a.arg for a in positional[len(positional) - len(
      args.defaults):]], args.defaults))
  defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs,
                                             args.kw_defaults) if d)
  if name not in defaults:
    return []
  held = [defaults[name]]
  index = next((i for i, a in enumerate(positional) if a.arg == name), None)
  # `obj.method(...)` passes `self` unwritten.
  bound_first = bool(positional) and positional[0].arg in ("self", "cls")
  project = analysis.project
  for _, call in project.calls_named(
      (function.name,), project.all_modules_with((function.name,))):
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords):
      return []
    at = None if index is None else index - (
        1 if bound_first and isinstance(call.func, ast.Attribute) else 0)
    passed = [k.value for k in call.keywords if k.arg == name] or (
        [call.args[at]] if at is not None and 0 <= at < len(call.args)
        else [])
    held += passed
  return held
