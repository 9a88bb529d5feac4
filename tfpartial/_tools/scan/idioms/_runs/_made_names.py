"""The names a call gives the variables its function makes from the text
it is passed: `self.encoder(x, 256, 'en1', 'encoder1')`, whose
`tf.get_variable(name='{}_W'.format(variable_name))` makes `en1_W`.

A filter by a piece of a variable's name (`'en1_' in var.name`) keeps
what such a call makes though no argument is that piece: the name is
only written inside the function, around what the caller passes. Only
names a variable is made with count (`get_variable`, `Variable`,
`add_weight`), each built from at least one argument of the call: a
name the function writes alone is the same for every call and tells no
call's variables apart. Part of `_stages`."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# The makers whose first argument is the variable's name.
_NAMED_FIRST = {"get_variable", "add_weight", "add_variable"}


def made_names(callee: ast.AST, call: ast.Call) -> Set[str]:
  """The names of the variables `callee` makes when `call` calls it,
  each written from the text the call passes.

  >>> code = ast.parse(
  ...     "def enc(x, name):\\n"
  ...     "  w = tf.get_variable('{}_W'.format(name), [2])\\n"
  ...     "  b = tf.Variable(0.0, name=name + '_b')\\n"
  ...     "  c = tf.get_variable('c', [2])\\n")
  >>> sorted(made_names(code.body[0], ast.parse("enc(h, 'en1')").body[0].value))
  ['en1_W', 'en1_b']
  """
  bound = _bound(callee, call)
  if not bound:
    return set()
  found: Set[str] = set()
  for node in _scopes.walk(callee):
    if not isinstance(node, ast.Call) or (
        _names.call_name(node) not in _names.VARIABLES):
      continue
    name = next((k.value for k in node.keywords if k.arg == "name"), None)
    if name is None and node.args and (
        _names.call_name(node) in _NAMED_FIRST):
      name = node.args[0]
    if name is None or not any(isinstance(n, ast.Name) and n.id in bound
                               for n in _scopes.walk(name)):
      continue
    text = _written(name, bound)
    if text:
      found.add(text)
  return found


def _bound(callee: ast.AST, call: ast.Call) -> Dict[str, str]:
  """The parameters of `callee` the call gives literal text, by name."""
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return {}
  params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
  if params and params[0] in {"self", "cls"} and isinstance(
      call.func, ast.Attribute):
    params = params[1:]  # A method called on its object.
  bound: Dict[str, str] = {}
  for param, arg in zip(params, call.args):
    if isinstance(arg, ast.Starred):
      break
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
      bound[param] = arg.value
  for keyword in call.keywords:
    if keyword.arg is not None and isinstance(
        keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
      bound[keyword.arg] = keyword.value.value
  return bound


def _written(node: ast.expr, bound: Dict[str, str]) -> Optional[str]:
  """The text `node` writes with the bound parameters' text, or None
  where any part of it is not known here."""
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value
  if isinstance(node, ast.Name):
    return bound.get(node.id)
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    left, right = _written(node.left, bound), _written(node.right, bound)
    return None if left is None or right is None else left + right
  if isinstance(node, ast.JoinedStr):
    parts: List[str] = []
    for value in node.values:
      inner = value.value if isinstance(value, ast.FormattedValue) else value
      text = _written(inner, bound) if isinstance(inner, ast.expr) else None
      if text is None:
        return None
      parts.append(text)
    return "".join(parts)
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and (
      isinstance(node.left, ast.Constant)) and isinstance(
          node.left.value, str):
    given = node.right.elts if isinstance(node.right, ast.Tuple) else [
        node.right]
    return _filled(node.left.value, [_written(g, bound) for g in given],
                   percent=True)
  if isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == "format" and (
          isinstance(node.func.value, ast.Constant)) and isinstance(
              node.func.value.value, str) and not node.keywords:
    return _filled(node.func.value.value,
                   [_written(a, bound) for a in node.args], percent=False)
  return None


def _filled(template: str, values: List[Optional[str]], percent: bool
            ) -> Optional[str]:
  """`template` filled with `values`, or None where one is unknown or
  the template does not take them."""
  if any(v is None for v in values):
    return None
  try:
    return template % tuple(values) if percent else template.format(*values)
  except (TypeError, ValueError, IndexError, KeyError):
    return None
