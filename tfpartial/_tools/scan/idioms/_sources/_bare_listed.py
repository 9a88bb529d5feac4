"""A hand-written list of bare variables, made by a helper of the project
(`W_fc5 = weight_variable([n, m])`, the helper returning
`tf.Variable(initial)`), given to a step whose loss reads, through the
names of the step's function, trainable variables the list leaves out
that no other step trains while it runs (a tracker's selection network
trained on the output of a prediction network restored from its own
earlier run).

What the code does decides: the loss is followed back through the
bindings that reach each read, and only what a listed variable is
applied to counts (`tf.matmul(h_lower, w_upper)`: a network below the
trained layer; a teacher's or a target network's output meeting the
student's only in the loss is not left out by the list) (`h =
tf.stop_gradient(h)` cuts the path; a variable whose `trainable` is
given `False` or anything but the constant `True`, in the call or
through the one parameter a helper passes on as `trainable=`, is no
left-out part); the list is written out, or lists of names joined by
`+`; the step must update (a bare `tf.gradients` only when an
`apply_gradients` reads its result); a step of the module whose list is
not a list of bare names, or over every variable with a loss that
reaches no variable made in its function (`make_train_op(loss)`, the
loss a parameter), counts as training everything; a step of the module
over every variable otherwise trains those its loss reaches, a listed
step the names it lists, each name only in the step's own function or
where that function does not bind it (another function's local `W1` is
not this one's), unless the ops of the two steps are only run, in the
step's own function, in different outermost loops (two stages, each
trained in a loop of its own); a step of another module whose list is
not bare names each made in its own function, or over every variable
with a loss reaching no variable made in its function, or over every
variable in a module importing this one, may train these and keeps the
rule silent."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, _loss_node, _trainable_variable, var_list_of)

_Position = Tuple[int, int]


def left_out(analysis: Analysis, chosen: ast.AST, scope: _scopes.Scope,
             call: ast.Call) -> bool:
  """Whether the step `call` trains a hand-written list of bare
  variables (at least one made by a helper of the project) while its
  loss reads other trainable ones that no step running with it trains."""
  names = _listed_names(chosen, scope)
  if not names or not all(_made(analysis, n, scope) for n in names) or not (
      any(_made(analysis, n, scope) == "helper" for n in names)):
    return False
  if _names.call_name(call) == "gradients" and not _applied(call, scope):
    return False  # Gradients only looked at: no step.
  loss = _loss_node(call)
  if loss is None:
    return False
  missing = _upstream(analysis, loss, scope, frozenset(names))
  if not missing:
    return False
  training = _training(analysis, analysis.module(scope))
  if any(other is not call for other, _ in training.unknown):
    return False  # What it trains is not read: it may train the rest.
  if _elsewhere(analysis, analysis.module(scope)):
    return False  # Another module's step may train the rest.
  ours = _ops_of(call, scope)
  for name in sorted(missing):
    for other, place in training.by_name.get(name, ()):
      if place is not scope and name in place.defs:
        continue  # Another function's own local of that name.
      if other is call or (place is scope and _run_apart(
          ours, _ops_of(other, scope), scope)):
        continue  # Itself, or another stage's step run in its own loops.
      missing.discard(name)
      break
  return bool(missing)


class _Training:
  """The steps of one module by the bare variables each trains, and
  those whose training is not read (built once per module, on the first
  step of it asking)."""

  def __init__(self, analysis: Analysis, module: object):
    self.by_name: Dict[str, List[Tuple[ast.Call, _scopes.Scope]]] = {}
    self.unknown: List[Tuple[ast.Call, _scopes.Scope]] = []
    for place, call in _steps_by_module(analysis).get(id(module), ()):
      trained = _trained_by(analysis, call, place)
      if trained is None:
        self.unknown.append((call, place))
        continue
      for name in trained:
        self.by_name.setdefault(name, []).append((call, place))


def _steps_by_module(analysis: Analysis
                     ) -> Dict[int, List[Tuple[_scopes.Scope, ast.Call]]]:
  """The project's steps by module, gathered once per analysis."""

  def gather() -> Dict[int, List[Tuple[_scopes.Scope, ast.Call]]]:
    found: Dict[int, List[Tuple[_scopes.Scope, ast.Call]]] = {}
    for place, call in analysis.calls_named(STEPS):
      found.setdefault(id(analysis.module(place)), []).append((place, call))
    return found
  steps = analysis.once("bare variables steps by module", gather)
  assert isinstance(steps, dict)
  return steps


def _elsewhere(analysis: Analysis, module: object) -> bool:
  """Whether a module other than `module` has a step that may train
  variables of another module: one whose training is not read (a list
  not of bare names each made in its own function, a loss reaching no
  variable made in its function), or one over every variable in a
  module importing `module`."""

  def gather() -> Tuple[int, Dict[int, int], Dict[str, Set[int]]]:
    total, by_module = 0, {}  # type: Tuple[int, Dict[int, int]]
    importers: Dict[str, Set[int]] = {}
    modules = {id(m): m for m in analysis.project.modules}
    for key, steps in _steps_by_module(analysis).items():
      for place, call in steps:
        trained = _trained_by(analysis, call, place)
        if trained and all(_made(analysis, n, place) for n in trained):
          if var_list_of(call) is None and key in modules:
            for source, attribute in modules[key].imports.values():
              for name in (source, f"{source}.{attribute}"):
                importers.setdefault(name, set()).add(key)
          continue  # Its own variables (or, whole, those it imports).
        total += 1
        by_module[key] = by_module.get(key, 0) + 1
    return total, by_module, importers
  found = analysis.once("bare variables steps of other modules", gather)
  assert isinstance(found, tuple)
  total, by_module, importers = found
  names = getattr(module, "names", ())
  if any(importers.get(name, set()) - {id(module)} for name in names):
    return True
  return bool(total > by_module.get(id(module), 0))


def _training(analysis: Analysis, module: object) -> _Training:
  found = analysis.once(f"bare variables trained {id(module)}",
                        lambda: _Training(analysis, module))
  assert isinstance(found, _Training)
  return found


def _listed_names(chosen: ast.AST, scope: _scopes.Scope) -> List[str]:
  """The plain names of a list or tuple written out (through one name
  bound once), else none."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    if len(defs) != 1:
      return []
    chosen = defs[0].value
  parts: List[ast.expr] = []
  pending: List[ast.AST] = [chosen]
  while pending:  # `[a, b] + [c]`: the lists joined.
    each = pending.pop()
    if isinstance(each, ast.BinOp) and isinstance(each.op, ast.Add):
      pending += [each.right, each.left]
      continue
    if not isinstance(each, (ast.List, ast.Tuple)) or not each.elts or (
        not all(isinstance(e, ast.Name) for e in each.elts)):
      return []
    parts += each.elts
  return [e.id for e in parts if isinstance(e, ast.Name)]


def _made(analysis: Analysis, name: str, scope: _scopes.Scope) -> str:
  """"direct" where every binding of `name` in `scope` makes a
  trainable variable, "helper" where one of them is a call of a helper
  of the project returning one, else "" (read once per name)."""
  found = scope.once((_made, name, 0), lambda: _made_now(
      analysis, name, scope))
  assert isinstance(found, str)
  return found


def _made_now(analysis: Analysis, name: str, scope: _scopes.Scope) -> str:
  defs = scope.defs.get(name, [])
  kinds = [_kind(analysis, d.value, scope) for d in defs]
  if not kinds or not all(kinds):
    return ""
  return "helper" if "helper" in kinds else "direct"


def _kind(analysis: Analysis, value: ast.AST, scope: _scopes.Scope) -> str:
  if isinstance(value, ast.Call) and _trainable_variable(value):
    return "direct" if _switch(value) is True else ""
  if not isinstance(value, ast.Call):
    return ""
  callee = analysis.flow.callee(value, scope)
  if not isinstance(callee, ast.FunctionDef):
    return ""
  made = analysis.once(f"bare variable helper {id(callee)}",
                       lambda: _returns_variable(analysis, callee))
  if not isinstance(made, str):
    return ""
  if made and not _passed_true(value, callee, made):
    return ""  # `False`, or a value not read, reaches `trainable=`.
  return "helper"


def _switch(made: ast.Call) -> object:
  """What a variable's `trainable` is given: True where it is left out
  or the constant `True`, else the expression (positionally too for
  `tf.Variable(initial, False)`)."""
  given = [k.value for k in made.keywords if k.arg == "trainable"]
  if not given and _names.call_name(made) in {"Variable", "VariableV1"} and (
      len(made.args) > 1):
    given = [made.args[1]]
  if any(isinstance(k, ast.Starred) for k in made.args) or any(
      k.arg is None for k in made.keywords):
    return made  # `*args`, `**kwargs`: not read.
  if not given or (isinstance(given[0], ast.Constant) and
                   given[0].value is True):
    return True
  return given[0]


def _passed_true(call: ast.Call, function: ast.FunctionDef,
                 parameter: str) -> bool:
  """Whether `call` gives the parameter `parameter` of `function` the
  constant `True` (by position, by keyword or by its default)."""
  if any(isinstance(a, ast.Starred) for a in call.args) or any(
      k.arg is None for k in call.keywords):
    return False
  given = [k.value for k in call.keywords if k.arg == parameter]
  positional = [*function.args.posonlyargs, *function.args.args]
  names = [a.arg for a in positional]
  if not given and parameter in names:
    index = names.index(parameter)
    if names and names[0] in {"self", "cls"} and isinstance(
        call.func, ast.Attribute):
      index -= 1
    if 0 <= index < len(call.args):
      given = [call.args[index]]
    else:
      defaults = function.args.defaults
      at = index - (len(names) - len(defaults))
      if names and names[0] in {"self", "cls"} and isinstance(
          call.func, ast.Attribute):
        at += 1
      given = [defaults[at]] if 0 <= at < len(defaults) else []
  elif not given:
    kwonly = [a.arg for a in function.args.kwonlyargs]
    if parameter in kwonly:
      default = function.args.kw_defaults[kwonly.index(parameter)]
      given = [default] if default is not None else []
  return bool(given) and isinstance(given[0], ast.Constant) and (
      given[0].value is True)


def _returns_variable(analysis: Analysis, function: ast.FunctionDef
                      ) -> Optional[str]:
  """Whether every `return` of `function` gives a trainable variable it
  makes (`return tf.Variable(initial)`, or a name bound only to one):
  "" where each is trainable whatever the call, the parameter passed on
  as `trainable=` where one is (trainable only where a call gives it
  `True`), None otherwise (another value given to `trainable=`)."""
  found = analysis.flow.functions.get(id(function))
  inner = found[1].scope_of(function) if found else None
  if inner is None:
    return None
  returned = [n.value for n in inner.nodes if isinstance(n, ast.Return)]
  if not returned:
    return None
  made: List[ast.AST] = []
  for value in returned:
    if value is None:
      return None
    if isinstance(value, ast.Name):
      defs = inner.defs.get(value.id, [])
      if not defs:
        return None
      made += [d.value for d in defs]
    else:
      made.append(value)
  arguments = function.args
  parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args,
                                *arguments.kwonlyargs)}
  switches: Set[str] = set()
  for each in made:
    if not isinstance(each, ast.Call) or not _trainable_variable(each):
      return None
    switch = _switch(each)
    if switch is True:
      continue
    if not isinstance(switch, ast.Name) or switch.id not in parameters or (
        switch.id in inner.defs):
      return None
    switches.add(switch.id)
  if len(switches) > 1:
    return None
  return next(iter(switches), "")


def _binding(scope: _scopes.Scope, name: str, at: _Position
             ) -> List[ast.expr]:
  """The values bound to `name` that reach a read at `at`: the last
  binding before it, else every binding (a loop's later one)."""
  ordered = scope.once((_binding, name, 0), lambda: sorted(
      ((tuple(d.end), i, d.value)
       for i, d in enumerate(scope.defs.get(name, []))),
      key=lambda each: each[:2]))
  assert isinstance(ordered, list)
  index = _bisected(ordered, at)
  if index:
    return [ordered[index - 1][2]]
  return [each[2] for each in ordered]


def _bisected(ordered: List[Tuple[Tuple[int, ...], int, ast.expr]],
              at: _Position) -> int:
  """How many of `ordered` (by end) end at or before `at`."""
  low, high = 0, len(ordered)
  while low < high:
    middle = (low + high) // 2
    if ordered[middle][0] <= at:
      low = middle + 1
    else:
      high = middle
  return low


def _reached(analysis: Analysis, loss: ast.expr, scope: _scopes.Scope
             ) -> Set[str]:
  """The names of trainable variables made in `scope` that the loss
  reads through the names of `scope` (not below a `stop_gradient`),
  followed once per loss of the function."""
  return set(_followed(analysis, loss, scope)[0])


def _followed(analysis: Analysis, loss: ast.expr, scope: _scopes.Scope
              ) -> Tuple[FrozenSet[str], Tuple[ast.AST, ...]]:
  """The variables the loss reaches and the values it reads on its way,
  followed once per loss of the function."""
  key = (_followed, ast.unparse(loss), _idiom.position(loss)[0])
  found = scope.once(key, lambda: _follow(analysis, _reads(loss), scope))
  assert isinstance(found, tuple)
  return found


def _upstream(analysis: Analysis, loss: ast.expr, scope: _scopes.Scope,
              listed: FrozenSet[str]) -> Set[str]:
  """The variables, not listed, that the loss reaches through what a
  listed variable is applied to (`tf.matmul(h_lower, w_upper)`: those
  `h_lower` reads): a network below the trained one, not a teacher or a
  target network whose output meets the trained one only in the loss."""
  _, values = _followed(analysis, loss, scope)
  seeds = [read for value in (loss, *values)
           for read in _feeding(value, listed)]
  return set(_follow(analysis, seeds, scope)[0]) - listed


def _feeding(node: ast.AST, listed: FrozenSet[str]
             ) -> List[Tuple[str, _Position]]:
  """The reads, not of listed names, of the innermost call or
  arithmetic around each read of a listed name in `node` (what the
  variable is applied to)."""
  found: List[Tuple[str, _Position]] = []
  stack: List[Tuple[ast.AST, Optional[ast.AST]]] = [(node, None)]
  while stack:
    each, near = stack.pop()
    if isinstance(each, ast.Call) and _names.call_name(each) in {
        "stop_gradient"}:
      continue
    if isinstance(each, (ast.Lambda, ast.FunctionDef, ast.ClassDef)):
      continue
    if isinstance(each, ast.Name) and isinstance(each.ctx, ast.Load) and (
        each.id in listed):
      if near is not None:
        found += [read for read in _reads(near) if read[0] not in listed]
      continue
    inner = each if isinstance(each, (ast.Call, ast.BinOp)) else near
    stack.extend((child, inner) for child in ast.iter_child_nodes(each))
  return found


def _follow(analysis: Analysis, reads: List[Tuple[str, _Position]],
            scope: _scopes.Scope
            ) -> Tuple[FrozenSet[str], Tuple[ast.AST, ...]]:
  """The variables made in `scope` that `reads` reach through the
  bindings of `scope`, and the values read on the way."""
  found: Set[str] = set()
  values: List[ast.AST] = []
  seen: Set[Tuple[str, _Position]] = set()
  pending = list(reads)
  while pending:
    name, at = pending.pop()
    if (name, at) in seen:
      continue
    seen.add((name, at))
    if _made(analysis, name, scope):
      found.add(name)
      continue
    for value in _binding(scope, name, at):
      values.append(value)
      pending.extend(_reads(value))
  return frozenset(found), tuple(values)


def _reads(node: ast.AST) -> List[Tuple[str, _Position]]:
  """The plain names `node` reads, with where, none below a
  `stop_gradient` nor inside a lambda."""
  found: List[Tuple[str, _Position]] = []
  stack: List[ast.AST] = [node]
  while stack:
    each = stack.pop()
    if isinstance(each, ast.Call) and _names.call_name(each) in {
        "stop_gradient"}:
      continue
    if isinstance(each, (ast.Lambda, ast.FunctionDef, ast.ClassDef)):
      continue
    if isinstance(each, ast.Name) and isinstance(each.ctx, ast.Load):
      found.append((each.id, _idiom.position(each)))
    stack.extend(ast.iter_child_nodes(each))
  return found


def _trained_by(analysis: Analysis, call: ast.Call, scope: _scopes.Scope
                ) -> Optional[Set[str]]:
  """The bare variables another step trains: its list's names, or, over
  every variable, those its loss reads; None where neither is read."""
  chosen = var_list_of(call)
  if chosen is not None:
    names = _listed_names(chosen, scope)
    return set(names) if names else None
  if _names.call_name(call) == "apply_gradients":
    return None
  loss = _loss_node(call)
  if loss is None:
    return None
  # A loss reaching no variable made here (a parameter of a helper that
  # builds the step, `make_train_op(loss)`) may train every variable.
  return _reached(analysis, loss, scope) or None


class _Index:
  """What `_applied` and `_ops_of` read of one function, read once: the
  names bound to each value, the `apply_gradients` calls by the names
  they read, and the names bound to each plain name (aliases)."""

  def __init__(self, scope: _scopes.Scope):
    self.bound: Dict[int, List[str]] = {}
    self.aliases: Dict[str, List[str]] = {}
    for name, defs in scope.defs.items():
      for d in defs:
        self.bound.setdefault(id(d.value), []).append(name)
        if isinstance(d.value, ast.Name):
          self.aliases.setdefault(d.value.id, []).append(name)
    self.applies: Dict[str, List[ast.Call]] = {}
    for node in scope.nodes:
      if isinstance(node, ast.Call) and (
          _names.call_name(node) == "apply_gradients"):
        for name in {n.id for n in ast.walk(node)
                     if isinstance(n, ast.Name)}:
          self.applies.setdefault(name, []).append(node)


def _index(scope: _scopes.Scope) -> _Index:
  found = scope.once((_Index, None, 0), lambda: _Index(scope))
  assert isinstance(found, _Index)
  return found


def _applied(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether the names bound to the gradients `call` makes are read by
  an `apply_gradients` of its function."""
  index = _index(scope)
  return any(name in index.applies for name in index.bound.get(id(call), ()))


def _ops_of(call: ast.Call, scope: _scopes.Scope) -> Optional[Set[str]]:
  """The names bound to the op of a step (through aliases, `train_step =
  train_op`; for a bare gradient, to the `apply_gradients` reading it)."""
  index = _index(scope)
  roots: List[ast.AST] = [call]
  if _names.call_name(call) == "gradients":
    roots = [apply for name in index.bound.get(id(call), ())
             for apply in index.applies.get(name, ())]
  ops = {name for root in roots for name in index.bound.get(id(root), ())}
  stack = list(ops)
  while stack:
    for alias in index.aliases.get(stack.pop(), ()):
      if alias not in ops:
        ops.add(alias)
        stack.append(alias)
  return ops or None


def _run_apart(ours: Optional[Set[str]], theirs: Optional[Set[str]],
               scope: _scopes.Scope) -> bool:
  """Whether the ops `ours` and `theirs` are each run, and read only as
  what a `run` of `scope` fetches, and no outermost loop of `scope` runs
  both."""
  if not ours or not theirs or ours & theirs:
    return False
  runs = scope.once((_run_apart, None, 0), lambda: _runs(scope))
  mine = _loops_running(ours, runs)
  other = _loops_running(theirs, runs)
  return mine is not None and other is not None and not mine & other


_Runs = Tuple[Dict[str, List[int]], FrozenSet[str]]


def _runs(scope: _scopes.Scope) -> _Runs:
  """For each name a `run` of `scope` fetches, the outermost loops (by
  index; a run outside any loop is its own) that fetch it; and the names
  read anywhere else."""
  loops = sorted(((_idiom.position(n), _end(n)) for n in scope.nodes
                  if isinstance(n, (ast.For, ast.While, ast.AsyncFor))))
  outer: List[Tuple[_Position, _Position]] = []
  for start, end in loops:
    if not outer or start >= outer[-1][1]:
      outer.append((start, end))
  fetched: Dict[str, List[int]] = {}
  # A binding of one name to another (`train_step = train_op`) is an
  # alias, not a read of the op.
  in_runs: Set[int] = {id(d.value) for defs in scope.defs.values()
                       for d in defs if isinstance(d.value, ast.Name)}
  alone = 0
  for node in scope.nodes:
    if not (isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "run" and node.args):
      continue
    at = _idiom.position(node)
    alone -= 1
    index = next((i for i, (s, e) in enumerate(outer) if s <= at < e),
                 alone)
    first = node.args[0]
    elements = first.elts if isinstance(first, (ast.List, ast.Tuple)) else [
        first]
    for element in elements:
      if isinstance(element, ast.Name):
        fetched.setdefault(element.id, []).append(index)
        in_runs.add(id(element))
  elsewhere = frozenset(
      n.id for n in scope.nodes if isinstance(n, ast.Name) and isinstance(
          n.ctx, ast.Load) and id(n) not in in_runs)
  return fetched, elsewhere


def _loops_running(ops: Set[str], runs: _Runs) -> Optional[Set[int]]:
  """The loops that run `ops`, None where none does or an op is read
  other than as what a `run` fetches."""
  fetched, elsewhere = runs
  found = {i for op in ops for i in fetched.get(op, [])}
  if not found or ops & elsewhere:
    return None
  return found


def _end(node: ast.AST) -> _Position:
  return (getattr(node, "end_lineno", 0) or 0,
          getattr(node, "end_col_offset", 0) or 0)
