"""A mask held through a round of steps that another function runs: a
helper returns the write op `tf.assign(w, w * mask)`; a caller, in any
module (a training script naming no sink too), builds it from a snapshot
of the weights' values (`masks = get_masks(weights, rate)`, a project
function reading them out of the session) and passes it, with a step, to
a function of the project whose loop runs both (`train_epoch(sess,
train_op, assign_all)`, `sess.run(assign_all)` beside `sess.run([loss,
train_op])`). The op cannot change inside that loop, so the mask stays
fixed through its steps: iterative magnitude pruning, its mask redrawn
only between rounds (part 40's facenet). Not a mask computed in the
graph (re-drawn with each run), an op built inside the loop of steps,
nor a loop that runs it beside no step."""

from __future__ import annotations

import ast
import itertools
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# Call sites of a function read, at most (as `flow.calls_of`).
_CALLERS = 24
# Calls that read a variable's values out of the graph into the program.
_READ_OUTS = {"eval", "run", "numpy", "get_weights", "get_value"}


def held(call: ast.Call, scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether the write op `call` makes in `scope` is built by a caller
  from a snapshot of the weights and run beside a step through a loop
  of another function (see the module's docstring).

  >>> from tfpartial._tools.scan import _files, _project
  >>> project = _project.Project([_files.Source("t.py", "def f(w):\\n"
  ...     "  return w.assign(w * 2)\\n")])
  >>> analysis = Analysis(project)
  >>> scope = next(project.functions_named(("f",)))
  >>> held(analysis.calls(scope)[0], scope, analysis)
  False
  """
  if not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  known = analysis.once("held rounds", dict)
  assert isinstance(known, dict)
  if id(scope.node) not in known:  # Its writes share their callers.
    known[id(scope.node)] = any(
        _runs_beside_step(use, caller, param, analysis)
        for caller, site in _calls_anywhere(scope, analysis)
        if _from_snapshot(site, caller, analysis)
        for name in _bound(site, caller, analysis)
        for use, param in _passes(caller, analysis).get(name, ()))
  return bool(known[id(scope.node)])


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


def _from_snapshot(site: ast.Call, caller: _scopes.Scope,
                   analysis: Analysis) -> bool:
  """Whether an argument of `site` is a name every binding of which, in
  `caller`, calls a function of the project that reads values out of
  the graph (`w.eval()`, `sess.run(w)`): numbers, fixed once made."""
  for argument in itertools.chain(site.args, (k.value for k in site.keywords)):
    defs = caller.defs.get(argument.id, []) if isinstance(
        argument, ast.Name) else []
    if defs and all(isinstance(d.value, ast.Call) and _reads_out(
        d.value, caller, analysis) for d in defs):
      return True
  return False


def _reads_out(call: ast.Call, scope: _scopes.Scope,
               analysis: Analysis) -> bool:
  """Whether the function `call` calls keeps values it reads out (not a
  `sess.run(init)` standing alone as a statement)."""
  inner = _callee_scope(call, scope, analysis)
  if inner is None:
    return False
  order = analysis.order(inner)
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _READ_OUTS
             and not isinstance(order.parent(n), ast.Expr)
             for n in inner.nodes)


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
  if inner.cls is not None and params[:1] == ["self"] and isinstance(
      call.func, ast.Attribute):
    params = params[1:]
  return params


def _argument(call: ast.Call, inner: _scopes.Scope, param: str
              ) -> Optional[ast.expr]:
  for keyword in call.keywords:
    if keyword.arg == param:
      return keyword.value
  params = _positional(call, inner)
  position = params.index(param) if param in params else -1
  if 0 <= position < len(call.args) and not any(
      isinstance(a, ast.Starred) for a in call.args[:position + 1]):
    return call.args[position]
  return None


def _runs_beside_step(use: ast.Call, caller: _scopes.Scope, param: str,
                      analysis: Analysis) -> bool:
  """Whether the function `use` calls runs `param` (the write op) in a
  loop that also runs a parameter `use` passes a step."""
  inner = _callee_scope(use, caller, analysis)
  if inner is None or param in inner.defs:
    return False  # (The op rebound there may be made anew each step.)
  runs = _runs(inner, analysis)
  loops = {id(loop) for c, loop in runs
           if loop is not None and param in _fetched(c.args[0])}
  for run, loop in runs:
    if loop is None or id(loop) not in loops:
      continue
    for name in _fetched(run.args[0]) - {param}:
      argument = _argument(use, inner, name)
      if name in inner.params and argument is not None and _is_step(
          argument, caller, analysis):
        return True
  return False


def _runs(scope: _scopes.Scope, analysis: Analysis
          ) -> List[Tuple[ast.Call, Optional[ast.AST]]]:
  """Each `run` call of `scope` with its innermost loop; found once."""
  known = analysis.once("held rounds: runs", dict)
  assert isinstance(known, dict)
  if id(scope) not in known:
    order = analysis.order(scope)
    known[id(scope)] = [(c, _loop_of(c, order, scope))
                        for c in analysis.calls(scope)
                        if _names.call_name(c) == "run" and c.args]
  runs = known[id(scope)]
  assert isinstance(runs, list)
  return runs


def _loop_of(node: ast.AST, order: "_order.Order", scope: _scopes.Scope
             ) -> Optional[ast.AST]:
  """The innermost loop around `node` in its function."""
  current = order.parent(node)
  while current is not None and current is not scope.node:
    if isinstance(current, (ast.For, ast.While, ast.AsyncFor)):
      return current
    current = order.parent(current)
  return None


def _fetched(fetches: ast.expr) -> Set[str]:
  """The bare names a `run` fetches (alone, or in a list or a tuple)."""
  items = fetches.elts if isinstance(fetches, (ast.List, ast.Tuple)) else [
      fetches]
  return {i.id for i in items if isinstance(i, ast.Name)}


def _is_step(node: ast.expr, scope: _scopes.Scope, analysis: Analysis
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
