"""Steps built in the branches of one `tf.cond`: `tf.cond(dis_phase,
lambda: d_opt.apply_gradients(dis_gv), lambda: g_opt.apply_gradients(
gen_gv))`, the predicate a tensor of the step counter. The graph holds
both branches and each run takes one, so over a training both steps run,
as two steps of the function that builds the `cond` do: a GAN's halves
trained in turn, not a flag's choice between two trainings. Part of
`var-list-filter`, which reads the filters of one function together."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# TensorFlow's graph conditionals and the keywords of their branches.
_CONDS = {"cond", "smart_cond"}
_BRANCHES = {"true_fn", "false_fn", "fn1", "fn2"}


def home(scope: _scopes.Scope) -> _scopes.Scope:
  """The function whose filters a step of `scope` is read with: for a
  lambda or a local function passed as a branch of a `tf.cond` there, the
  function that builds the `cond`; else `scope` itself.

  >>> module = _scopes.collect(ast.parse(
  ...     "def f(p, a, b):\\n"
  ...     "  return tf.cond(p, lambda: a.minimize(1), lambda: b)\\n"))
  >>> branch = module.children[0].children[0]
  >>> home(branch).name
  'f'
  """
  parent = scope.parent
  if parent is None or _cond_of(scope.node, parent) is None:
    return scope
  return parent


def _cond_of(node: ast.AST, parent: _scopes.Scope) -> Optional[ast.Call]:
  """The `tf.cond` of `parent` that takes `node` (a lambda, or a local
  function by its name) as one of its branches."""
  name = getattr(node, "name", None) if isinstance(
      node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
  if name is None and not isinstance(node, ast.Lambda):
    return None
  for each in parent.nodes:
    if not isinstance(each, ast.Call) or _names.call_name(
        each) not in _CONDS:
      continue
    branches = list(each.args[1:3]) + [
        k.value for k in each.keywords if k.arg in _BRANCHES]
    if any(b is node or name is not None and isinstance(b, ast.Name) and (
        b.id == name) for b in branches):
      return each
  return None
