"""The root scopes a module names by passing them to a helper of the
project: `sdae(x, layers, name="SDAE_Variable")` where `def sdae(...,
name="SDAE")` opens `with tf.variable_scope(name):` around what it
builds. The helper builds a whole model under the name its caller
chooses, as a `with tf.variable_scope("SDAE_Variable"):` written in the
caller would (an autoencoder beside a matrix factorisation, each with
its own optimizer; an MLP helper called once per network). Part of
`var-list-filter`'s root scopes."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

_SCOPES = {"variable_scope", "name_scope"}


def passed(project: _project.Project, tree: ast.AST,
           top: Optional[_scopes.Scope]) -> Set[str]:
  """The literal names calls of `tree` (a module read as `top`) give a
  helper of the project for the scope it opens first."""
  found: Set[str] = set()
  if top is None:
    return found
  for call, name, value in _literal_arguments(tree):
    target = project.resolve(top, name)
    if not isinstance(target, tuple):
      continue
    function = target[0]
    opened = _opened_parameter(function)
    if opened is None:
      continue
    positional = [a.arg for a in (*function.args.posonlyargs,
                                  *function.args.args)]
    if value == opened or isinstance(value, int) and (
        value < len(positional) and positional[value] == opened):
      found.add(_text(call, value))
  return found


def _literal_arguments(tree: ast.AST
                       ) -> Iterator[Tuple[ast.Call, str, object]]:
  """(call, callee, keyword name or position) of each string literal
  given to a call of a plain name (`sdae(..., name="ae")`) outside any
  scope (inside one, the name is a part's: `fc('v2s_lt', x)` under
  `with tf.variable_scope('CTRL_Model'):`)."""
  inside = {id(n) for w in ast.walk(tree) if isinstance(w, ast.With) and any(
      isinstance(i.context_expr, ast.Call) and _names.call_name(
          i.context_expr) in _SCOPES for i in w.items)
            for s in w.body for n in ast.walk(s)}
  for node in ast.walk(tree):
    if not isinstance(node, ast.Call) or not isinstance(
        node.func, ast.Name) or id(node) in inside:
      continue
    for index, argument in enumerate(node.args):
      if _string(argument):
        yield node, node.func.id, index
    for keyword in node.keywords:
      if keyword.arg and _string(keyword.value):
        yield node, node.func.id, keyword.arg


def _string(node: ast.AST) -> bool:
  return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
      bool(node.value))


def _text(call: ast.Call, where: object) -> str:
  """The literal at a position or keyword of `call`."""
  node = call.args[where] if isinstance(where, int) else next(
      k.value for k in call.keywords if k.arg == where)
  assert isinstance(node, ast.Constant)
  return str(node.value)


def _opened_parameter(function: ast.AST) -> object:
  """The parameter a function opens as its first scope, outside any
  other (`with tf.variable_scope(name):`), or None."""
  params = {a.arg for a in ast.walk(getattr(function, "args")) if isinstance(
      a, ast.arg)}
  for node in ast.walk(function):
    if isinstance(node, ast.With):
      for item in node.items:
        expr = item.context_expr
        if isinstance(expr, ast.Call) and _names.call_name(
            expr) in _SCOPES and expr.args and isinstance(
                expr.args[0], ast.Name) and expr.args[0].id in params:
          return expr.args[0].id
      return None
  return None
