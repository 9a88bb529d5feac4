"""A scope filter made by a helper of the project from the scope its
caller passes (`def get_variables_in_scope(name): return
tf.get_collection(GLOBAL_VARIABLES, scope=name)`), where the caller
opens that scope itself around what it builds (`with
tf.variable_scope(disc_scope): ...`, then
`get_variables_in_scope(disc_scope)`), or passes a literal scope the
project builds a network under (`self._trainable_variables(scope=
"agent_net")` beside `self._nn_model(x, scope="agent_net")`, a builder
that opens its `scope` around its body): the whole network built there,
as the same filter written inline in the caller is."""

from __future__ import annotations

import ast
from typing import Callable, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow

# Whether a function opens the scope a name holds around what it builds.
Opens = Callable[[Optional[ast.AST], _scopes.Scope], bool]


def opened_by_caller(flow: Flow, node: ast.AST, scope: _scopes.Scope,
                     opens: Opens) -> bool:
  """Whether `node` calls a helper of the project that returns a scope
  filter by one of its parameters, passing a scope that the step's
  function `scope` opens around what it builds."""
  if not isinstance(node, ast.Call):
    return False
  callee = flow.callee(node, scope)
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
  returns = [r.value for r in _scopes.walk(callee)
             if isinstance(r, ast.Return) and r.value is not None]
  chosen = {_names.dotted(_names.scope_argument(r) or r) if isinstance(
      r, ast.Call) else None for r in returns}
  if len(chosen) != 1 or not returns:
    return False
  name = chosen.pop()
  if name not in params:
    return False
  position = params.index(name) - (1 if params[:1] == ["self"] else 0)
  passed = _argument(node, name, position)
  if isinstance(passed, ast.Constant) and isinstance(passed.value, str):
    return _built_under(flow, passed.value)
  return isinstance(passed, ast.Name) and opens(passed, scope)


def _built_under(flow: Flow, literal: str) -> bool:
  """Whether the project builds a network under the scope `literal`:
  passes it to a function of its own that opens that parameter as a
  variable scope around its whole body (`def _nn_model(self, x, scope):
  with tf.variable_scope(scope): ...` called with `scope="agent_net"`)."""
  if not literal.isidentifier():
    return False
  project = flow.project
  for module in project.modules_with((literal,)):
    for home in project.scopes_at(module, module.lines_of((literal,))):
      for call in _scopes.walk(home.node):
        if isinstance(call, ast.Call) and _opens_argument(
            flow.callee(call, home), call, literal):
          return True
  return False


def _opens_argument(callee: Optional[ast.AST], call: ast.Call,
                    literal: str) -> bool:
  """Whether `call` passes `literal` as a parameter that `callee` opens
  as a variable scope in a `with` of its own body's top level."""
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
  shift = 1 if params[:1] == ["self"] and isinstance(
      call.func, ast.Attribute) else 0
  names = {k.arg for k in call.keywords if isinstance(
      k.value, ast.Constant) and k.value.value == literal}
  names.update(params[i + shift] for i, a in enumerate(call.args)
               if isinstance(a, ast.Constant) and a.value == literal
               and i + shift < len(params))
  return any(isinstance(s, ast.With) and any(
      isinstance(i.context_expr, ast.Call) and _names.call_name(
          i.context_expr) == "variable_scope" and i.context_expr.args
      and isinstance(i.context_expr.args[0], ast.Name)
      and i.context_expr.args[0].id in names for i in s.items)
             for s in callee.body)


def _argument(call: ast.Call, name: str, position: int
              ) -> Optional[ast.expr]:
  """What `call` passes as the parameter `name` at `position`."""
  keyword = next((k.value for k in call.keywords if k.arg == name), None)
  if keyword is not None:
    return keyword
  return call.args[position] if 0 <= position < len(call.args) else None
