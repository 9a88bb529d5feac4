"""The root scopes a module names by passing them to a helper of the
project: `sdae(x, layers, name="SDAE_Variable")` where `def sdae(...,
name="SDAE")` opens `with tf.variable_scope(name):` around what it
builds, or a class whose `__init__` opens one so
(`ACNetwork(s_size, a_size, 'global', None)`, an asynchronous
actor-critic's global network, whose workers apply their gradients to
it). The helper builds a whole model under the name its caller
chooses, as a `with tf.variable_scope("SDAE_Variable"):` written in the
caller would (an autoencoder beside a matrix factorisation, each with
its own optimizer; an MLP helper called once per network). Part of
`var-list-filter`'s root scopes."""

from __future__ import annotations

import ast
import re
import weakref
from typing import Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes


def helpers(project: _project.Project) -> Set[str]:
  """The names of the project's functions that open a scope from a
  parameter (read only in modules whose text opens one from a name)."""
  found: Set[str] = set()
  for module in project.modules:
    if _FROM_A_NAME.search(module.source.text) and project.parsed(
        module) and module.tree is not None:
      found.update(f.name for f in _defined(module.tree.body) if (
          _opened_parameter(f) is not None))
      found.update(c.name for c in module.tree.body if isinstance(
          c, ast.ClassDef) and _opened_parameter(_init(c)) is not None)
  return found


def _init(cls: ast.ClassDef) -> Optional[ast.FunctionDef]:
  """A class's own `__init__`, if it has one."""
  return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and (
      f.name == "__init__")), None)


def _defined(body: List[ast.stmt]) -> Iterator[ast.FunctionDef]:
  """A module's functions and its classes' methods."""
  for statement in body:
    if isinstance(statement, ast.FunctionDef):
      yield statement
    elif isinstance(statement, ast.ClassDef):
      yield from _defined(statement.body)


# `variable_scope(name)`, `name_scope(scope,`: a scope from a name.
_FROM_A_NAME = re.compile(r"_scope\(\s*[A-Za-z_]\w*\s*[,)]")


def passed(project: _project.Project, module: _project.Module,
           named: Set[str]) -> Set[str]:
  """The literal names calls of `module` give a helper of the project
  (of the names `named`, from `helpers`) for the scope it opens first."""
  found: Set[str] = set()
  text = module.source.text
  top = module.scope
  if top is None or module.tree is None or not any(
      f"{name}(" in text for name in named):
    return found
  for call, name, value in _literal_arguments(module.tree, named):
    target = project.resolve(top, name)
    if not isinstance(target, (tuple, _scopes.ClassInfo)):
      continue
    # `ACNetwork(s, a, 'global')`: the class's `__init__` opens the scope.
    function, skipped = (_init(target.node), 1) if isinstance(
        target, _scopes.ClassInfo) else (target[0], 0)
    opened = _opened_parameter(function)
    if opened is None or not isinstance(function, ast.FunctionDef):
      continue
    positional = [a.arg for a in (*function.args.posonlyargs,
                                  *function.args.args)][skipped:]
    if value == opened or isinstance(value, int) and (
        value < len(positional) and positional[value] == opened):
      found.add(_text(call, value))
  return found


def _literal_arguments(tree: ast.AST, named: Set[str]
                       ) -> Iterator[Tuple[ast.Call, str, object]]:
  """(call, callee, keyword name or position) of each string literal
  given to a call of a name of `named` (`sdae(..., name="ae")`) outside
  any scope (inside one, the name is a part's: `fc('v2s_lt', x)` under
  `with tf.variable_scope('CTRL_Model'):`)."""
  for node in _named_calls(tree):
    if not isinstance(node.func, ast.Name) or node.func.id not in named:
      continue
    for index, argument in enumerate(node.args):
      if _string(argument):
        yield node, node.func.id, index
    for keyword in node.keywords:
      if keyword.arg and _string(keyword.value):
        yield node, node.func.id, keyword.arg


def _named_calls(tree: ast.AST) -> List[ast.Call]:
  """The calls of a bare name (`sdae(...)`) under `tree` that no `with
  ..._scope(...)` holds, found once per tree (each step asks again)."""
  kept = _NAMED_CALLS.get(tree)
  if kept is None:
    kept = _NAMED_CALLS[tree] = [
        node for node in _outside_scopes(tree) if isinstance(
            node, ast.Call) and isinstance(node.func, ast.Name)]
  return kept


# Per tree (weakly: a scan's trees go when it ends).
_NAMED_CALLS: weakref.WeakKeyDictionary[ast.AST, List[ast.Call]] = (
    weakref.WeakKeyDictionary())


def _outside_scopes(node: ast.AST) -> Iterator[ast.AST]:
  """The nodes under `node` that no `with ..._scope(...)` holds, in the
  order of a recursive walk (but for a single `Load` or `+`), read from
  one stack: a module's every node, once."""
  stack = _scopes.children(node)[::-1]
  while stack:
    child = stack.pop()
    yield child
    if not (isinstance(child, ast.With) and any(
        isinstance(i.context_expr, ast.Call) and _names.call_name(
            i.context_expr) in _names.TF_SCOPES for i in child.items)):
      stack.extend(_scopes.children(child)[::-1])


def _string(node: ast.AST) -> bool:
  return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
      bool(node.value))


def _text(call: ast.Call, where: object) -> str:
  """The literal at a position or keyword of `call`."""
  node = call.args[where] if isinstance(where, int) else next(
      k.value for k in call.keywords if k.arg == where)
  assert isinstance(node, ast.Constant)
  return str(node.value)


def _opened_parameter(function: Optional[ast.AST]) -> object:
  """The parameter a function opens as a scope in a statement of its own
  body, outside any other (`with tf.variable_scope(name):`), or None."""
  if function is None:
    return None
  params = {a.arg for a in ast.walk(getattr(function, "args")) if isinstance(
      a, ast.arg)}
  for node in _names.statements(function):
    if isinstance(node, ast.With):
      for item in node.items:
        expr = item.context_expr
        if isinstance(expr, ast.Call) and _names.call_name(
            expr) in _names.TF_SCOPES and expr.args and isinstance(
                expr.args[0], ast.Name) and expr.args[0].id in params:
          return expr.args[0].id
      return None
  return None
