"""A mask held through a round of steps that another function runs: a
helper returns the write op `tf.assign(w, w * mask)` (`tf.multiply(w,
mask)`, `w.assign(...)` too), its factor a parameter of the helper (or
the element of one that a comprehension zips with the weights); a
caller, in any module (a training script naming no sink too), fills
that parameter with a name every binding of which is what a function of
the project returns: NumPy masks from values a library's call reads out
(see `_snapshot_masks`), fixed when the op is built. The caller binds
the op to a name it passes to a function of the project that never
rebinds that parameter, and one loop's body there runs, on every turn,
the op (unfed: `sess.run(op)`, as a statement of the body or under `if
op:`, the same each turn) and a parameter the same call fills with a
step (as a statement, or in both arms of an `if`). The op cannot change
inside that loop, so the mask stays fixed through its steps: iterative
magnitude pruning, its mask redrawn only between rounds (part 40's
facenet). Not a mask computed in the graph, a placeholder or a
variable, a scalar, an op built or fed inside the loop of steps, a run
under another `if` in the loop, nor a loop that runs it beside no
step."""

from __future__ import annotations

import ast
import itertools
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _snapshot_masks

# Call sites of a function read, at most (as `flow.calls_of`).
_CALLERS = 24


def held(call: ast.Call, scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether the write op `call` makes in `scope` is built by a caller
  from a snapshot of the weights and run beside a step through a loop
  of another function (see the module's docstring).

  >>> from tfpartial._tools.scan import _files, _project
  >>> project = _project.Project([_files.Source("t.py", "def f(w, m):\\n"
  ...     "  return w.assign(w * m)\\n")])
  >>> analysis = Analysis(project)
  >>> scope = next(project.functions_named(("f",)))
  >>> held(analysis.calls(scope)[0], scope, analysis)
  False
  """
  if not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  param = _mask_param(call, scope)
  if param is None:
    return False
  known = analysis.once("held rounds", dict)
  assert isinstance(known, dict)
  key = (id(scope.node), param)
  if key not in known:  # Its writes share their callers.
    known[key] = any(
        _runs_beside_step(use, caller, name, analysis)
        for caller, site in _calls_anywhere(scope, analysis)
        if _snapshot_mask(_argument(site, scope, param), caller, analysis)
        for each in _bound(site, caller, analysis)
        for use, name in _passes(caller, analysis).get(each, ()))
  return bool(known[key])


def _mask_param(call: ast.Call, scope: _scopes.Scope) -> Optional[str]:
  """The parameter of `scope` that the write `call` multiplies its
  target by (`tf.assign(w, w * mask)`, `mask` zipped from `masks`)."""
  if isinstance(call.func, ast.Attribute) and len(call.args) == 1 and (
      _names.call_name(call) == "assign"):
    target, value = call.func.value, call.args[0]
  elif _names.call_name(call) == "assign" and len(call.args) == 2:
    target, value = call.args[0], call.args[1]
  else:
    return None
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
    operands = [value.left, value.right]
  elif isinstance(value, ast.Call) and _names.call_name(value) == (
      "multiply") and len(value.args) == 2 and not value.keywords:
    operands = list(value.args)
  else:
    return None
  names = [o.id for o in operands if isinstance(o, ast.Name)]
  if not isinstance(target, ast.Name) or len(names) != 2 or (
      names.count(target.id) != 1):
    return None
  factor = names[1 - names.index(target.id)]
  defs = scope.defs.get(factor, [])
  if len(defs) == 1 and defs[0].inner and isinstance(
      defs[0].value, ast.Name):
    factor = defs[0].value.id  # A comprehension's element of a parameter.
  elif defs:
    return None
  if factor not in scope.params or factor in scope.defs:
    return None
  return factor


def _snapshot_mask(argument: Optional[ast.expr], caller: _scopes.Scope,
                   analysis: Analysis) -> bool:
  """Whether `argument` is a name every binding of which, in `caller`,
  is what a function of the project returns that makes masks from values
  read out of the graph (see `_snapshot_masks`)."""
  if not isinstance(argument, ast.Name):
    return False
  defs = caller.defs.get(argument.id, [])
  return bool(defs) and all(
      d.replaces and d.part is None and isinstance(d.value, ast.Call)
      and _snapshot_masks.makes_masks(
          _callee_scope(d.value, caller, analysis), analysis)
      for d in defs)


def _calls_anywhere(scope: _scopes.Scope, analysis: Analysis
                    ) -> List[Tuple[_scopes.Scope, ast.Call]]:
  """The project's calls of `scope`'s function from any module, one that
  names no sink too (`flow.calls_of` reads only the scanned modules);
  found once per function."""
  known = analysis.once("held rounds: callers", dict)
  assert isinstance(known, dict)
  if id(scope.node) not in known:
    flow, project, name = analysis.flow, analysis.project, scope.name
    known[id(scope.node)] = list(itertools.islice((
        (s, c) for module in project.all_modules_with((name,))
        for s in project.scopes_at(module, module.lines_of((name,)))
        for c in analysis.calls(s) if _names.call_name(c) == name
        and flow.callee(c, s) is scope.node and s is not scope), _CALLERS))
  found = known[id(scope.node)]
  assert isinstance(found, list)
  return found


def _bound(site: ast.Call, caller: _scopes.Scope, analysis: Analysis
           ) -> List[str]:
  """The names an assignment binds to the call `site` (`a = f(...)`)."""
  statement = analysis.order(caller).parent(site)
  if not isinstance(statement, ast.Assign) or statement.value is not site:
    return []
  return [t.id for t in statement.targets if isinstance(t, ast.Name)]


def _callee_scope(call: ast.Call, scope: _scopes.Scope,
                  analysis: Analysis) -> Optional[_scopes.Scope]:
  """The scope of the project's function `call` calls, if any."""
  flow = analysis.flow
  known = flow.functions.get(id(flow.callee(call, scope)))
  inner = known[1].scope_of(known[0]) if known is not None else None
  if inner is None or not isinstance(inner.node, ast.FunctionDef):
    return None
  return inner


def _passes(caller: _scopes.Scope, analysis: Analysis
            ) -> Dict[str, List[Tuple[ast.Call, str]]]:
  """By each name `caller` passes to a function of the project: (the
  call, the parameter it fills); found once per caller."""
  known = analysis.once("held rounds: passes", dict)
  assert isinstance(known, dict)
  if id(caller) not in known:
    found: Dict[str, List[Tuple[ast.Call, str]]] = {}
    for call in analysis.calls(caller):
      inner = _callee_scope(call, caller, analysis)
      for name, param in _named_arguments(call, inner) if inner else ():
        found.setdefault(name, []).append((call, param))
    known[id(caller)] = found
  passes = known[id(caller)]
  assert isinstance(passes, dict)
  return passes


def _named_arguments(call: ast.Call, inner: _scopes.Scope
                     ) -> Iterator[Tuple[str, str]]:
  """(a bare name `call` passes, the parameter of `inner` it fills)."""
  for keyword in call.keywords:
    if isinstance(keyword.value, ast.Name) and keyword.arg in inner.params:
      yield keyword.value.id, keyword.arg
  for argument, param in zip(call.args, _positional(call, inner)):
    if isinstance(argument, ast.Starred):
      break
    if isinstance(argument, ast.Name):
      yield argument.id, param


def _positional(call: ast.Call, inner: _scopes.Scope) -> List[str]:
  """The parameters the positional arguments of `call` fill."""
  params = list(inner.params)
  if inner.cls is not None and params[:1] in (["self"], ["cls"]) and (
      isinstance(call.func, ast.Attribute)):
    params = params[1:]
  return params


def _argument(call: ast.Call, inner: _scopes.Scope, param: str
              ) -> Optional[ast.expr]:
  """What `call` passes for `inner`'s parameter `param`, if it says."""
  return _arguments(call, inner).get(param)


def _arguments(call: ast.Call, inner: _scopes.Scope
               ) -> Dict[str, ast.expr]:
  """By each parameter of `inner` that `call` fills, what it passes."""
  found = {k.arg: k.value for k in call.keywords
           if k.arg is not None and k.arg in inner.params}
  for argument, param in zip(call.args, _positional(call, inner)):
    if isinstance(argument, ast.Starred):
      break
    found.setdefault(param, argument)
  return found


def _runs_beside_step(use: ast.Call, caller: _scopes.Scope, param: str,
                      analysis: Analysis) -> bool:
  """Whether the function `use` calls runs `param` (the write op), unfed,
  in a loop whose body also runs a parameter `use` passes a step, both
  unconditional statements of that body."""
  inner = _callee_scope(use, caller, analysis)
  if inner is None or param in inner.defs:
    return False  # (The op rebound there may be made anew each step.)
  runs = _loop_runs(inner, analysis)
  stepped = _stepped_loops(use, caller, inner, analysis)
  return any(loop in stepped for loop in runs.get(param, ()))


def _stepped_loops(use: ast.Call, caller: _scopes.Scope,
                   inner: _scopes.Scope, analysis: Analysis) -> Set[int]:
  """The loops of `inner` whose body runs a parameter `use` fills with a
  step; found once per call."""
  known = analysis.once("held rounds: stepped", dict)
  assert isinstance(known, dict)
  if id(use) not in known:
    given = _arguments(use, inner)
    known[id(use)] = {
        loop for name, loops in _loop_runs(inner, analysis, fed=True).items()
        if name in given and _is_step(given[name], caller, analysis)
        for loop in loops}
  stepped = known[id(use)]
  assert isinstance(stepped, set)
  return stepped


def _loop_runs(scope: _scopes.Scope, analysis: Analysis, fed: bool = False
               ) -> Dict[str, List[int]]:
  """By each parameter of `scope` that a loop's body runs on every turn
  (unfed, unless `fed`; see `_every_turn`): the ids of those loops;
  found once."""
  known = analysis.once("held rounds: runs", dict)
  assert isinstance(known, dict)
  if (id(scope), fed) not in known:
    found: Dict[str, List[int]] = {}
    params = set(scope.params)
    for loop in scope.nodes:
      if isinstance(loop, (ast.For, ast.While, ast.AsyncFor)):
        names = set().union(*(_every_turn(s, fed) for s in loop.body))
        for name in names & params:
          found.setdefault(name, []).append(id(loop))
    known[(id(scope), fed)] = found
  runs = known[(id(scope), fed)]
  assert isinstance(runs, dict)
  return runs


def _every_turn(statement: ast.stmt, fed: bool) -> Set[str]:
  """The names `statement` runs each time it runs: a `run` statement's
  fetches (`sess.run(op)`, `err, _ = sess.run([loss, op])`; unfed unless
  `fed`); with `fed`, those both arms of an `if` run; else one `if op:`
  (or `if op is not None:`) runs, its test the op itself (not rebound,
  so the same on every turn)."""
  if isinstance(statement, (ast.Expr, ast.Assign)):
    call = statement.value
    if isinstance(call, ast.Call) and _names.call_name(call) == "run" and (
        call.args) and (fed or len(call.args) == 1 and not call.keywords):
      return _fetched(call.args[0])
    return set()
  if not isinstance(statement, ast.If):
    return set()
  arms = [set().union(*(_every_turn(s, fed) for s in arm))
          for arm in (statement.body, statement.orelse)]
  if fed:
    return arms[0] & arms[1]
  test = statement.test
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.IsNot) and isinstance(
          test.comparators[0], ast.Constant) and (
              test.comparators[0].value is None):
    test = test.left
  if statement.orelse or not isinstance(test, ast.Name):
    return set()
  return arms[0] & {test.id}


def _fetched(fetches: ast.expr) -> Set[str]:
  """The bare names a `run` fetches (alone, or in a list or a tuple)."""
  items = fetches.elts if isinstance(fetches, (ast.List, ast.Tuple)) else [
      fetches]
  return {i.id for i in items if isinstance(i, ast.Name)}


def _is_step(node: ast.expr, scope: _scopes.Scope, analysis: Analysis
             ) -> bool:
  """`_found_step`, found once per name a scope passes."""
  if not isinstance(node, ast.Name):
    return _found_step(node, scope, analysis)
  known = analysis.once("held rounds: steps", dict)
  assert isinstance(known, dict)
  if (id(scope), node.id) not in known:
    known[(id(scope), node.id)] = _found_step(node, scope, analysis)
  return bool(known[(id(scope), node.id)])


def _found_step(node: ast.expr, scope: _scopes.Scope, analysis: Analysis
                ) -> bool:
  """Whether `node` is a train op: the flow's, or a name bound to what a
  function of the project returns, an op made under `control_dependencies`
  of a train op (`with tf.control_dependencies([apply_op]): train_op =
  tf.no_op()`)."""
  if "train" in analysis.flow.ops(node, scope):
    return True
  defs = scope.defs.get(node.id, []) if isinstance(node, ast.Name) else []
  for each in defs:
    inner = _callee_scope(each.value, scope, analysis) if isinstance(
        each.value, ast.Call) else None
    if inner is not None and any(
        isinstance(n, ast.Return) and n.value is not None and (
            _after_step(n.value, inner, analysis)) for n in inner.nodes):
      return True
  return False


def _after_step(value: ast.expr, scope: _scopes.Scope,
                analysis: Analysis) -> bool:
  """Whether `value` is a train op, or a name bound inside a `with` that
  makes the op depend on one."""
  if "train" in analysis.flow.ops(value, scope):
    return True
  order = analysis.order(scope)
  for each in scope.defs.get(value.id, []) if isinstance(
      value, ast.Name) else []:
    current = order.parent(each.value)
    while current is not None and current is not scope.node:
      if isinstance(current, ast.With) and any(
          isinstance(i.context_expr, ast.Call) and _names.call_name(
              i.context_expr) == "control_dependencies"
          and i.context_expr.args and "train" in analysis.flow.ops(
              i.context_expr.args[0], scope) for i in current.items):
        return True
      current = order.parent(current)
  return False
