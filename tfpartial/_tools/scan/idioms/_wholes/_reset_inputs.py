"""Whether a step trains inputs set anew for each search, not weights:
its list is a display of names (`var_list=[z]`), each a variable the
scope makes with `tf.Variable(...)`, hands whole to a call as what it
runs on (`gan_image = dcgan.get_gen(z, y)`), and writes (`z.assign(x)`)
inside a loop that, later in the same pass, runs the step (`for cat in
range(6): sess.run(z.assign(x)); for i in range(10): sess.run(
optimizer)`). A latent code searched for each item (a GAN inverted,
an image made to please a recommender) or an attack's perturbation:
the generator and the scorer were never in the list, and no part of a
variable is frozen. A variable set once, before the loop (a soft
prompt), or one no call runs on, stays a candidate.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_WRITES = {"assign", "initializer"}


def reset_each_pass(var_list: Optional[ast.AST], step: ast.Call,
                    scope: _scopes.Scope) -> bool:
  """Whether every name of `var_list` is a variable `scope` makes, runs
  a call on, and writes in a loop before that pass runs `step`."""
  if not isinstance(var_list, (ast.List, ast.Tuple)) or not (
      var_list.elts) or not all(isinstance(e, ast.Name)
                                for e in var_list.elts):
    return False
  names = {e.id for e in var_list.elts if isinstance(e, ast.Name)}
  held = _holders(step, scope)
  if not held or not all(_made_and_run_on(name, scope) for name in names):
    return False
  runs = [n for n in scope.nodes if isinstance(n, ast.Call) and (
      _names.call_name(n) == "run") and any(
          isinstance(each, ast.Name) and each.id in held
          for each in ast.walk(n))]
  loops = [n for n in scope.nodes if isinstance(n, _LOOPS)]
  return bool(runs) and all(any(
      _inside(run, loop) and all(_written_before(name, loop, run)
                                 for name in names) for loop in loops)
                            for run in runs)


def _holders(step: ast.Call, scope: _scopes.Scope) -> Set[str]:
  """The names the step's op is bound to in `scope`."""
  return {t.id for n in scope.nodes if isinstance(n, ast.Assign) and (
      n.value is step) for t in n.targets if isinstance(t, ast.Name)}


def _made_and_run_on(name: str, scope: _scopes.Scope) -> bool:
  """Whether every binding of `name` in `scope` is a `tf.Variable(...)`,
  and a call that is no variable's method is given `name` itself."""
  defs = scope.defs.get(name, ())
  if not defs or not all(isinstance(d.value, ast.Call) and (
      _names.call_name(d.value) == "Variable") for d in defs):
    return False
  return any(isinstance(n, ast.Call) and isinstance(
      n.func, ast.Attribute) and _names.call_name(n) not in _WRITES and any(
          isinstance(a, ast.Name) and a.id == name for a in n.args)
             and not (isinstance(n.func.value, ast.Name) and (
                 n.func.value.id in {"tf", "np"}))
             for n in scope.nodes)


def _inside(node: ast.AST, loop: ast.AST) -> bool:
  line = getattr(node, "lineno", 0)
  return getattr(loop, "lineno", 0) < line <= (
      getattr(loop, "end_lineno", None) or 0)


def _written_before(name: str, loop: ast.AST, run: ast.Call) -> bool:
  """Whether `name` is written (`name.assign(...)`, `name.initializer`)
  in `loop`'s body before `run`."""
  body: List[ast.stmt] = getattr(loop, "body", [])
  return any(isinstance(n, ast.Attribute) and n.attr in _WRITES and (
      isinstance(n.value, ast.Name)) and n.value.id == name and (
          n.lineno < run.lineno)
             for statement in body for n in ast.walk(statement))
