"""Whether a filter keeps the scope its function hands the model's
builder: `self.add_generator(name_scope=self.config['name_scope'])`, then
`tf.get_collection(TRAINABLE_VARIABLES, scope=self.config['name_scope'])`,
where the builder's whole body is `with tf.variable_scope(name_scope):`.
Everything the builder makes lies under the scope both are given: the
whole model, not a part of it. A builder that makes something outside
that scope (a head after the `with`), or is handed anything beside the
scope (another model's features to build on), stays a candidate. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow


def given_to_builder(flow: Flow, node: ast.AST, home: _scopes.Scope) -> bool:
  """Whether `node` (a collection's call) filters by the expression a call
  of `home` passes a builder for the one scope it builds under."""
  chosen = _names.scope_argument(node) if isinstance(node, ast.Call) \
      else None
  if chosen is None or isinstance(chosen, ast.Constant):
    return False
  text = ast.unparse(chosen)
  for call in home.nodes:
    given = [*call.args, *(k.value for k in call.keywords)] if isinstance(
        call, ast.Call) else []
    if len(given) != 1 or call is node or ast.unparse(given[0]) != text:
      continue  # Given nothing else: no other model's output to build on.
    callee = flow.callee(call, home) if isinstance(call, ast.Call) else None
    opened = _sole_scope(callee) if callee is not None else None
    if callee is not None and opened is not None and isinstance(
        call, ast.Call) and _passes(call, callee, opened, text):
      return True
  return False


def _sole_scope(function: ast.AST) -> Optional[str]:
  """The parameter a function's whole body opens as a scope (`with
  tf.variable_scope(name_scope): ...` and nothing else), or None."""
  body = [s for s in _names.statements(function) if not (
      isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
  if len(body) != 1 or not isinstance(body[0], ast.With):
    return None
  for item in body[0].items:
    expr = item.context_expr
    if isinstance(expr, ast.Call) and _names.call_name(
        expr) in _names.TF_SCOPES and expr.args and isinstance(expr.args[0], ast.Name):
      return expr.args[0].id
  return None


def _passes(call: ast.Call, function: ast.AST, param: str, text: str
            ) -> bool:
  """Whether `call` gives `function`'s parameter `param` the expression
  `text`, by keyword or by position (a method's `self` aside)."""
  if any(k.arg == param and ast.unparse(k.value) == text
         for k in call.keywords):
    return True
  args = getattr(function, "args", None)
  if not isinstance(args, ast.arguments):
    return False
  names = [a.arg for a in (*args.posonlyargs, *args.args)]
  if names[:1] == ["self"] and isinstance(call.func, ast.Attribute):
    names = names[1:]
  return any(index < len(names) and names[index] == param and (
      ast.unparse(a) == text) for index, a in enumerate(call.args))
