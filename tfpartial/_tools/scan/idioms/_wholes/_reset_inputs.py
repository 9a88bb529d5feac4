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
prompt) or under a test in it (`if epoch == 0:`), one moved from its
own value (a max-norm `z.assign(tf.clip_by_norm(z, 1.0))`), or one
only TensorFlow's own functions run on (`tf.nn.embedding_lookup(z,
ids)`), stays a candidate.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_TF_ROOTS = {"tf", "np", "numpy", "tensorflow"}


class _Index:
  """What the gate asks of a scope, read once per scope: the names each
  value is bound to, the `run` calls by the names they hold, the loops
  around each call (each loop's own subtree walked again, so nested
  loops cost their depth), and the callees' roots each name is handed
  to."""

  def __init__(self, scope: _scopes.Scope):
    self.bound: Dict[int, Set[str]] = {}
    self.runs: Dict[str, List[ast.Call]] = {}
    self.loops: Dict[int, List[ast.AST]] = {}
    self.given: Dict[str, Set[str]] = {}
    for node in scope.nodes:
      if isinstance(node, ast.Assign):
        self.bound.setdefault(id(node.value), set()).update(
            t.id for t in node.targets if isinstance(t, ast.Name))
      elif isinstance(node, _LOOPS):
        for each in ast.walk(node):
          if isinstance(each, ast.Call) and _inside(each, node):
            self.loops.setdefault(id(each), []).append(node)
      elif isinstance(node, ast.Call):
        self._call(node)

  def _call(self, call: ast.Call) -> None:
    if _names.call_name(call) == "run":
      for name in {each.id for each in ast.walk(call)
                   if isinstance(each, ast.Name)}:
        self.runs.setdefault(name, []).append(call)
    if isinstance(call.func, ast.Attribute):
      root = _root(call.func)
      for arg in call.args:
        if isinstance(arg, ast.Name):
          self.given.setdefault(arg.id, set()).add(root)


def reset_each_pass(var_list: Optional[ast.AST], step: ast.Call,
                    scope: _scopes.Scope) -> bool:
  """Whether every name of `var_list` is a variable `scope` makes, runs
  a call on, and writes in a loop before that pass runs `step`."""
  if not isinstance(var_list, (ast.List, ast.Tuple)) or not (
      var_list.elts) or not all(isinstance(e, ast.Name)
                                for e in var_list.elts):
    return False
  names = {e.id for e in var_list.elts if isinstance(e, ast.Name)}
  index: _Index = scope.once((_Index, None, 0), lambda: _Index(scope))
  held = index.bound.get(id(step), set())
  if not held or not all(_made_and_run_on(name, scope, index)
                         for name in names):
    return False
  runs = list({id(run): run for name in sorted(held)
               for run in index.runs.get(name, ())}.values())
  runs.sort(key=lambda run: (run.lineno, run.col_offset))
  return bool(runs) and all(any(
      all(_written_before(name, loop, run) for name in names)
      for loop in index.loops.get(id(run), ())) for run in runs)


def _made_and_run_on(name: str, scope: _scopes.Scope, index: _Index
                     ) -> bool:
  """Whether every binding of `name` in `scope` is a `tf.Variable(...)`,
  and a method of some object other than TensorFlow, NumPy or the
  variable itself is given `name` (`gan.get_gen(z, y)`)."""
  defs = scope.defs.get(name, ())
  if not defs or not all(isinstance(d.value, ast.Call) and (
      _names.call_name(d.value) == "Variable") for d in defs):
    return False
  return bool(index.given.get(name, set()) - _TF_ROOTS - {name})


def _root(func: ast.Attribute) -> str:
  """The name a dotted callee starts from (`tf` of `tf.nn.lookup`)."""
  node: ast.expr = func
  while isinstance(node, ast.Attribute):
    node = node.value
  return node.id if isinstance(node, ast.Name) else ""


def _inside(node: ast.AST, loop: ast.AST) -> bool:
  line = getattr(node, "lineno", 0)
  return getattr(loop, "lineno", 0) < line <= (
      getattr(loop, "end_lineno", None) or 0)


def _written_before(name: str, loop: ast.AST, run: ast.Call) -> bool:
  """Whether a statement of `loop`'s own body (under no test or inner
  block) before `run` writes `name` with values that do not read it
  (`name.assign(x)`), or runs `name.initializer`."""
  body: List[ast.stmt] = getattr(loop, "body", [])
  return any(isinstance(statement, (ast.Expr, ast.Assign)) and (
      statement.lineno < run.lineno) and _fresh_write(name, statement)
             for statement in body)


def _fresh_write(name: str, statement: ast.stmt) -> bool:
  """Whether `statement` holds `name.assign(value)` with a value that
  does not read `name`, or `name.initializer`."""
  for node in ast.walk(statement):
    if not isinstance(node, ast.Attribute) or not isinstance(
        node.value, ast.Name) or node.value.id != name:
      continue
    if node.attr == "initializer":
      return True
    call = next((c for c in ast.walk(statement) if isinstance(
        c, ast.Call) and c.func is node), None)
    if node.attr == "assign" and call is not None and call.args and not any(
        isinstance(each, ast.Name) and each.id == name
        for a in call.args for each in ast.walk(a)):
      return True
  return False
