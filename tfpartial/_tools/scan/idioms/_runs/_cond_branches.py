"""Steps built in the branches of one `tf.cond`: `tf.cond(dis_phase,
lambda: d_opt.apply_gradients(dis_gv), lambda: g_opt.apply_gradients(
gen_gv))`, the predicate a tensor of the step counter (`tf.less(tf.mod(
counter, 2), 1)`, `counter` the global step or a variable the function
`assign_add`s). The graph holds both branches and each run takes one by
the counter, so over a training both steps run, as two steps of the
function that builds the `cond` do: a GAN's halves trained in turn. A
predicate of a flag, a constant or a Python value (`tf.constant(
FLAGS.discriminator_only)`) chooses one training, and is not this. Part
of `var-list-filter`, which reads the filters of one function
together."""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# TensorFlow's graph conditionals and the keywords of their branches.
_CONDS = {"cond", "smart_cond"}
_BRANCHES = {"true_fn", "false_fn", "fn1", "fn2"}
# The calls that give the step counter.
_COUNTERS = {"get_or_create_global_step", "get_global_step",
             "create_global_step"}
# How many local names a predicate is followed through.
_DEPTH = 4


def home(scope: _scopes.Scope) -> _scopes.Scope:
  """The function whose filters a step of `scope` is read with: for a
  lambda or a local function passed as a branch of a `tf.cond` there
  whose predicate reads the step counter, the function that builds the
  `cond`; else `scope` itself.

  >>> module = _scopes.collect(ast.parse(
  ...     "def f(a, b):\\n"
  ...     "  c = tf.train.get_or_create_global_step()\\n"
  ...     "  p = tf.equal(c % 2, 0)\\n"
  ...     "  return tf.cond(p, lambda: a.minimize(1), lambda: b)\\n"
  ...     "def g(p, a, b):\\n"
  ...     "  return tf.cond(p, lambda: a.minimize(1), lambda: b)\\n"))
  >>> home(module.children[0].children[0]).name
  'f'
  >>> home(module.children[1].children[0]).name
  '<lambda>'
  """
  parent = scope.parent
  cond = _cond_of(scope.node, parent) if parent is not None else None
  if parent is None or cond is None or not _by_counter(cond, parent):
    return scope
  return parent


def _by_counter(cond: ast.Call, parent: _scopes.Scope) -> bool:
  """Whether the predicate of `cond` reads the step counter, through
  the local names it is made of: a call that gives the global step, or
  a name `parent` adds to in the graph (`tf.assign_add(counter, 1)`).
  A flag, a constant or a Python value is read the same in every run."""
  predicate = cond.args[0] if cond.args else next(
      (k.value for k in cond.keywords if k.arg in {"pred", "predicate"}),
      None)
  if predicate is None:
    return False
  counted = {_counted(n) for n in parent.nodes if isinstance(
      n, ast.Call) and _names.call_name(n) in {"assign_add", "assign_sub"}}
  seen: Set[str] = set()
  todo = [predicate]
  for _ in range(_DEPTH + 1):
    later = []
    for node in todo:
      for each in ast.walk(node):
        if isinstance(each, ast.Call) and _names.call_name(
            each) in _COUNTERS:
          return True
        if not isinstance(each, ast.Name) or each.id in seen:
          continue
        seen.add(each.id)
        if each.id in counted:
          return True
        defs = parent.defs.get(each.id, [])
        made = getattr(defs[0], "value", None) if len(defs) == 1 else None
        if isinstance(made, ast.expr):
          later.append(made)
    todo = later
  return False


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


def _counted(call: ast.Call) -> Optional[str]:
  """The variable `tf.assign_add(v, 1)` or `v.assign_add(1)` adds to."""
  if len(call.args) >= 2 or not isinstance(call.func, ast.Attribute):
    return _names.dotted(call.args[0]) if call.args else None
  return _names.dotted(call.func.value)
