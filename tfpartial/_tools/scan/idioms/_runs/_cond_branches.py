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
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# TensorFlow's graph conditionals and the keywords of their branches.
_CONDS = {"cond", "smart_cond"}
_BRANCHES = {"true_fn", "false_fn", "fn1", "fn2"}
# The calls that give the step counter.
_COUNTERS = {"get_or_create_global_step", "get_global_step",
             "create_global_step"}
# The calls that take a value modulo another.
_MODULOS = {"mod", "floormod", "truncatemod"}
_COMPARES = {"less", "less_equal", "greater", "greater_equal", "equal",
             "not_equal"}
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
  """Whether the predicate of `cond` repeats with the step counter: every
  value it reads, through the local names it is made of, is the counter
  (a call that gives the global step, or a name `parent` adds to in the
  graph: `tf.assign_add(counter, 1)`) or a literal, and it takes the
  counter modulo something (`%`, `tf.mod`, `floormod`). A flag, a
  constant or a Python value is read the same in every run; a test that
  never repeats (`counter >= 0`) picks one branch for a whole training."""
  predicate = cond.args[0] if cond.args else next(
      (k.value for k in cond.keywords if k.arg in {"pred", "predicate"}),
      None)
  if predicate is None:
    return False
  counted = {_counted(n) for n in parent.nodes if isinstance(
      n, ast.Call) and _names.call_name(n) in {"assign_add", "assign_sub"}}
  seen: Set[str] = set()
  todo = [predicate]
  periodic = reads_counter = False
  for _ in range(_DEPTH + 1):
    later = []
    for node in todo:
      for each in _read_values(node):
        if isinstance(each, ast.Call):
          reads_counter |= _names.call_name(each) in _COUNTERS
          periodic |= _names.call_name(each) in _MODULOS
        elif isinstance(each, ast.BinOp):
          periodic |= isinstance(each.op, ast.Mod)
        elif isinstance(each, ast.Attribute):
          if _names.dotted(each) not in counted:
            return False
          reads_counter = True
        elif isinstance(each, ast.Name) and each.id not in seen:
          seen.add(each.id)
          if each.id in counted:
            reads_counter = True
            continue
          defs = parent.defs.get(each.id, [])
          made = getattr(defs[0], "value", None) if len(
              defs) == 1 else None
          if not isinstance(made, ast.expr):
            return False
          later.append(made)
    todo = later
  return reads_counter and periodic and not todo


def _read_values(node: ast.expr) -> List[ast.expr]:
  """The expressions `node` reads as values: calls (not their functions'
  names), operators, names and attributes in place of a value; of a
  modulo only what is divided, and of a comparison with a modulo only
  the modulo (`tf.less(tf.mod(counter, period), dis_steps)`: the period
  and the phase's length may be any values, the test still repeats)."""
  found: List[ast.expr] = []
  todo = [node]
  while todo:
    each = todo.pop()
    found.append(each)
    if _modulo(each):
      todo.append(each.left if isinstance(each, ast.BinOp) else getattr(
          each, "args")[0])
      continue
    sides = _compared(each)
    if any(_modulo(side) for side in sides):
      todo.extend(side for side in sides if _modulo(side))
    elif isinstance(each, ast.Call):
      todo.extend(each.args)
      todo.extend(k.value for k in each.keywords)
    elif not isinstance(each, (ast.Name, ast.Attribute, ast.Constant)):
      todo.extend(c for c in ast.iter_child_nodes(each)
                  if isinstance(c, ast.expr))
  return found


def _modulo(node: ast.expr) -> bool:
  """`a % b`, `tf.mod(a, b)`, `tf.math.floormod(a, b)`."""
  return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) or (
      isinstance(node, ast.Call) and len(node.args) >= 1 and (
          _names.call_name(node) in _MODULOS))


def _compared(node: ast.expr) -> List[ast.expr]:
  """The sides of a comparison (`a < b`, `tf.less(a, b)`), else []."""
  if isinstance(node, ast.Compare):
    return [node.left, *node.comparators]
  if isinstance(node, ast.Call) and _names.call_name(node) in _COMPARES:
    return list(node.args[:2])
  return []


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
