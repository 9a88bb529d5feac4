"""A mask held through a round of steps that another function runs: a
helper returns the write op `tf.assign(w, w * mask)` (`tf.multiply(w,
mask)`, `w.assign(...)` too), its factor a parameter of the helper (or
the element of one that a comprehension zips with the weights); a
caller, in any module (a training script naming no sink too), fills
that parameter with a name every binding of which is what a function of
the project returns: NumPy masks, each element a comparison (joined by
`+`, `*`, `&`, `|`) of values read out of the graph by a library's call
(`w.eval()`, `sess.run(weights)`, `get_weights()`, not a project's
method of that name), so an elementwise 0/1 array fixed when the op is
built. The caller binds the op to a name it passes to a function of the
project that never rebinds that parameter, and one loop's body there
runs the op (unfed: `sess.run(op)`) and, also as an unconditional
statement of that body, a parameter the same call fills with a step.
The op cannot change inside that loop, so the mask stays fixed through
its steps: iterative magnitude pruning, its mask redrawn only between
rounds (part 40's facenet). Not a mask computed in the graph, a
placeholder or a variable, a scalar, an op built or fed inside the loop
of steps, a run under an `if` in the loop, nor a loop that runs it
beside no step."""

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
# A library's calls that read a variable's values out of the graph (a
# project's function of one of these names is not one).
_READ_OUTS = {"eval", "run", "numpy", "get_weights", "get_value"}


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
  read out of the graph (see `_makes_masks`)."""
  if not isinstance(argument, ast.Name):
    return False
  defs = caller.defs.get(argument.id, [])
  return bool(defs) and all(
      d.replaces and d.part is None and isinstance(d.value, ast.Call)
      and _makes_masks(_callee_scope(d.value, caller, analysis), analysis)
      for d in defs)


def _makes_masks(inner: Optional[_scopes.Scope], analysis: Analysis
                 ) -> bool:
  """Whether every value `inner` returns holds only comparisons of values
  read out (`[np.abs(w.eval()) > t for w in ws]`, or a list appended
  `(v <= low) + (v >= high)`); found once per function."""
  if inner is None:
    return False
  known = analysis.once("held rounds: masks", dict)
  assert isinstance(known, dict)
  if id(inner.node) not in known:
    returns = [n.value for n in inner.nodes if isinstance(n, ast.Return)]
    elements = [e for r in returns if r is not None
                for e in _elements(r, inner, analysis)]
    known[id(inner.node)] = bool(elements) and None not in returns and all(
        e is not None and _compared(e, inner, analysis) for e in elements)
  return bool(known[id(inner.node)])


def _elements(value: ast.expr, inner: _scopes.Scope, analysis: Analysis
              ) -> List[Optional[ast.expr]]:
  """The masks a returned `value` holds (None for one not known)."""
  if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
    return [value.elt]
  if not isinstance(value, ast.Name):
    return [value]
  found: List[Optional[ast.expr]] = []
  for each in inner.defs.get(value.id, []):
    if isinstance(each.value, ast.List) and not each.value.elts:
      continue  # Filled by `append` (below).
    found += _elements(each.value, inner, analysis) if not isinstance(
        each.value, ast.Name) else [None]
  for call in analysis.calls(inner):
    if isinstance(call.func, ast.Attribute) and isinstance(
        call.func.value, ast.Name) and call.func.value.id == value.id:
      found += call.args if call.func.attr == "append" and len(
          call.args) == 1 else [None]
  return found


def _compared(node: ast.expr, inner: _scopes.Scope,
              analysis: Analysis) -> bool:
  """Whether `node` is a NumPy comparison of values read out (or such
  comparisons joined elementwise)."""
  if isinstance(node, ast.BinOp) and isinstance(
      node.op, (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr)):
    return _compared(node.left, inner, analysis) and _compared(
        node.right, inner, analysis)
  if not isinstance(node, ast.Compare):
    return False
  flow = analysis.flow
  return any(_whole(o) and any(
      isinstance(n, ast.Call) and _names.call_name(n) in _READ_OUTS
      and isinstance(n.func, ast.Attribute)
      and id(flow.callee(n, inner)) not in flow.functions
      for n in _scopes.made_from(o, inner))
             for o in [node.left, *node.comparators])


def _whole(operand: ast.expr) -> bool:
  """Whether `operand` keeps the shape of what it reads: a name, a
  read-out (`w.eval()`) or its `abs`, not a reduction (`v.max()`)."""
  if isinstance(operand, ast.Call) and _names.call_name(operand) == "abs" and (
      len(operand.args) == 1):
    operand = operand.args[0]
  return isinstance(operand, ast.Name) or isinstance(
      operand, ast.Call) and _names.call_name(operand) in _READ_OUTS


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
  """By each parameter of `scope` a `run` fetches as a statement of a
  loop's body (unfed, unless `fed`): the ids of those loops; found
  once."""
  known = analysis.once("held rounds: runs", dict)
  assert isinstance(known, dict)
  if (id(scope), fed) not in known:
    order = analysis.order(scope)
    found: Dict[str, List[int]] = {}
    for call in analysis.calls(scope):
      loop = _loop_of(call, order) if _names.call_name(
          call) == "run" and len(call.args) >= 1 else None
      if loop is not None and (fed or len(call.args) == 1 and not (
          call.keywords)):
        for name in _fetched(call.args[0]) & set(scope.params):
          found.setdefault(name, []).append(id(loop))
    known[(id(scope), fed)] = found
  runs = known[(id(scope), fed)]
  assert isinstance(runs, dict)
  return runs


def _loop_of(call: ast.Call, order: "_order.Order") -> Optional[ast.AST]:
  """The loop whose body holds `call` as a statement of its own
  (`sess.run(op)`, `err, _ = sess.run([loss, op])`), not under an `if`."""
  statement = order.parent(call)
  if not isinstance(statement, (ast.Expr, ast.Assign)) or (
      statement.value is not call):
    return None
  loop = order.parent(statement)
  if isinstance(loop, (ast.For, ast.While, ast.AsyncFor)) and any(
      s is statement for s in loop.body):
    return loop
  return None


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
