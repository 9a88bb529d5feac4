"""Whether an expression is a number: a literal, or a parameter, a name
or a `self.` attribute set only to one or defaulting to one (`beta1=0.9`,
`self.c = c` of `c=2`). A number scales every element of a weight the
same; it chooses none of them, as a mask would. Read by `_decayed`,
`_target_network`'s soft updates and `weight-remask`'s constraints,
which also take a `self.` attribute set to arithmetic of numbers and
of parameters the project's calls pass only numbers (`self.decay_factor
= 1 - decay_rate` of `Decay(0.01)`) as a number, whatever the parameter
is named; a parameter no call passes is judged by its name
(`decay_rate`, not `frozen`)."""

from __future__ import annotations

import ast
import re
from typing import Dict, Optional

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _zero_choice


def number(node: ast.AST, scope: _scopes.Scope, depth: int = 2) -> bool:
  """A number, or a name or `self.` attribute set only to one: a name
  its function never binds is the enclosing scope's (a module's `TAU =
  0.005`), a parameter is its default's (none: whatever a call passes).

  >>> module = _scopes.collect(ast.parse("TAU = -0.005"))
  >>> number(ast.parse("TAU").body[0].value, module)
  True
  """
  if isinstance(node, ast.Constant):
    return isinstance(node.value, (int, float)) and not isinstance(
        node.value, bool)
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, (
      ast.USub, ast.UAdd)):
    return number(node.operand, scope, depth)
  if isinstance(node, ast.Name) and depth:
    default = _defaults(scope).get(node.id)
    defs = scope.defs.get(node.id, [])
    if default is not None and not defs:
      return number(default, scope, 0)
    if not defs and node.id not in scope.params and (
        scope.parent is not None):
      return number(node, scope.parent, depth)
    return bool(defs) and all(
        number(d.value, scope, depth - 1) for d in defs)
  if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self" and (
          scope.cls is not None) and depth:
    values = scope.cls.attributes.get(f"self.{node.attr}", [])
    return bool(values) and all(
        number(v, home, depth - 1) for v, home in values)
  return False


def _defaults(scope: _scopes.Scope) -> Dict[str, Optional[ast.expr]]:
  """A function's parameters with their defaults."""
  args = getattr(scope.node, "args", None)
  if not isinstance(args, ast.arguments):
    return {}
  positional = [*args.posonlyargs, *args.args]
  found: Dict[str, Optional[ast.expr]] = dict(zip(
      [a.arg for a in positional[len(positional) - len(args.defaults):]],
      args.defaults))
  found.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults))
  return found


def scale(node: ast.AST, scope: _scopes.Scope, project: object = None
          ) -> bool:
  """A number, or a `self.` attribute set only to arithmetic of numbers
  and of parameters given only numbers (`1 - decay_rate`, not `1 -
  mask` of `Shrink(np.load(path))`)."""
  if number(node, scope):
    return True
  if not (isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self" and (
          scope.cls is not None)):
    return False
  values = scope.cls.attributes.get(f"self.{node.attr}", [])
  return bool(values) and all(_arithmetic(v, home, project)
                              for v, home in values)


def _arithmetic(node: ast.AST, home: _scopes.Scope, project: object,
                given: bool = True) -> bool:
  """Arithmetic of numbers, and (while `given`) of parameters whose
  values, as the project's calls pass them, are such arithmetic."""
  if isinstance(node, ast.BinOp):
    return _arithmetic(node.left, home, project, given) and _arithmetic(
        node.right, home, project, given)
  if isinstance(node, ast.UnaryOp):
    return _arithmetic(node.operand, home, project, given)
  if isinstance(node, ast.Name) and node.id in home.params and not (
      home.defs.get(node.id)) and given:
    default = _defaults(home).get(node.id)
    passed = _zero_choice.passed(node.id, home, project) + (
        [(default, home)] if default is not None else [])
    if not passed:  # Nothing reaches it here: its name is all there is.
      return bool(_RATE_NAME.search(node.id))
    return all(_arithmetic(v, caller, project, False)
               for v, caller in passed)
  return number(node, home)


# Parameter names that say they hold one number scaling every element.
_RATE_NAME = re.compile(r"(rate|ratio|decay|factor|scale|coef|alpha|"
                        r"lambda|momentum)", re.I)
