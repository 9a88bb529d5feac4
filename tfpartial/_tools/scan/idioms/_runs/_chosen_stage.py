"""Steps of one function that a stage value picks between, and a scope
the project builds on another's output.

An Estimator's `model_fn` often builds every stage's step and hands the
Estimator one, chosen by the stage it is told (`train_op = train_op_s1
if stage == 1 else train_op_s2`): the steps run apart, each in its own
run. Which stage runs on which is read where the model is built, in
whatever module: a function opening `variable_scope('s2')` whose block
reads what its `variable_scope('s1')` block computed builds s2 on s1."""

from __future__ import annotations

import ast
from typing import (Dict, Iterator, List, Optional, Sequence, Set, Tuple,
                    TypeVar)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._project import Project
from tfpartial._tools.scan.idioms._runs import _stage_values

# Searches bounded: at most this many modules are read for one pair.
_MODULES = 40


def _kept_as(call: ast.Call, function: ast.AST) -> Optional[str]:
  """The name a step's op is kept in within `function` (`train_op_s1 =
  optimizer_s1.minimize(...)`, `self.f_op = ...`)."""
  for node in _scopes.walk(function):
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and any(
        each is call for each in _scopes.walk(node.value)):
      name = _names.dotted(node.targets[0])
      if name is not None and (name.count(".") == 0 or (
          name.count(".") == 1 and name.startswith("self."))):
        return name
  return None


def _stage_test(test: ast.expr, varying: Set[str]) -> bool:
  """A test of a stage's value: a name compared with a constant (`stage
  == 1`, `phase == 'fine'`), not an iteration's parity (`i % 2 == 0`)
  nor a name a loop sets anew (`phase = 'D' if i % 2 else 'G'`)."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      _names.dotted(test.left) not in varying | {None}) and isinstance(
          test.comparators[0], ast.Constant) and isinstance(
              test.ops[0], (ast.Eq, ast.NotEq)) and not isinstance(
                  test.comparators[0].value, bool)


def _set_in_loops(function: ast.AST) -> Set[str]:
  """The names a loop of `function` assigns."""
  return {name for loop in _scopes.walk(function) if isinstance(
      loop, (ast.For, ast.While, ast.AsyncFor))
          for node in _scopes.walk(loop) if isinstance(node, ast.Assign)
          for target in node.targets
          for name in [_names.dotted(target)] if name is not None}


def _choices(function: ast.AST) -> Iterator[Tuple[Set[str], Set[str]]]:
  """The names each arm of a stage test reads or assigns, by an `if`
  expression (`a if stage == 1 else b`) or the arms of an `if`
  (`if stage == 1: sess.run(self.u_op) else: sess.run(self.f_op)`)."""
  varying = _set_in_loops(function)
  for node in _scopes.walk(function):
    if isinstance(node, (ast.IfExp, ast.If)) and node.orelse and (
        _stage_test(node.test, varying)):
      body: List[ast.AST] = list(node.body) if isinstance(
          node.body, list) else [node.body]
      orelse: List[ast.AST] = list(node.orelse) if isinstance(
          node.orelse, list) else [node.orelse]
      yield _named(body), _named(orelse)


def _range_test(test: ast.expr, counters: Set[str], varying: Set[str]
                ) -> Optional[bool]:
  """Whether a test of a loop's counter against a bound (`epoch <
  self._switch`, `step >= 22000`) holds before the bound (True) or from
  it on (False); None for any other test (`i % 2 == 0`, a name a loop
  assigns, a flag)."""
  if not isinstance(test, ast.Compare) or len(test.ops) != 1:
    return None
  counter, bound = _names.dotted(test.left), test.comparators[0]
  bounded = isinstance(bound, ast.Constant) and isinstance(
      bound.value, int) and not isinstance(bound.value, bool) or (
          _names.dotted(bound) not in varying | counters | {None})
  if counter not in counters or not bounded:
    return None
  if isinstance(test.ops[0], (ast.Lt, ast.LtE)):
    return True
  return False if isinstance(test.ops[0], (ast.Gt, ast.GtE)) else None


def _ranges(function: ast.AST) -> Iterator[Tuple[Set[str], Set[str]]]:
  """The names each arm of an `if` on a loop's counter reads or assigns,
  the arm run before the bound first (`if epoch < switch: op = self.a
  else: op = self.b`: the step range of `a`, then that of `b`)."""
  for node, before in range_tests(function):
    arms = _named(list(node.body)), _named(list(node.orelse))
    yield arms if before else (arms[1], arms[0])


def range_tests(function: ast.AST) -> Iterator[Tuple[ast.If, bool]]:
  """Each outermost `if` on a loop's counter with an `else`, and whether
  its body is the arm run before the bound."""
  varying = _set_in_loops(function)
  loops = [loop for loop in _scopes.walk(function) if isinstance(
      loop, (ast.For, ast.AsyncFor, ast.While))]
  counters = {name for loop in loops if isinstance(
      loop, (ast.For, ast.AsyncFor)) for name in [_names.dotted(loop.target)]
              if name is not None}
  for node in _scopes.walk(function):
    if isinstance(node, ast.If) and node.orelse:
      before = _range_test(node.test, counters, varying)
      if before is not None and _outermost(node, loops):
        yield node, before


def _outermost(node: ast.If, loops: Sequence[ast.AST]) -> bool:
  """Whether the counter `node` tests is that of a loop no loop around
  `node` encloses: an inner loop's counter starts again each time round
  the outer one, so its ranges repeat and are no phases of training."""
  counter = _names.dotted(getattr(node.test, "left"))
  around = [loop for loop in loops if _holds(loop, node)]
  return not any(isinstance(loop, (ast.For, ast.AsyncFor)) and (
      _names.dotted(loop.target) == counter) and any(
          other is not loop and _holds(other, loop) for other in around)
                 for loop in around)


def _holds(outer: ast.AST, inner: ast.AST) -> bool:
  return any(n is inner for n in _scopes.walk(outer))


def _named(nodes: List[ast.AST]) -> Set[str]:
  """The names and `self.` attributes some nodes read or assign."""
  return {name for each in nodes for n in _scopes.walk(each)
          if isinstance(n, (ast.Name, ast.Attribute))
          for name in [_names.dotted(n)] if name is not None}


class Picking:
  """The stage tests of one function and the names its steps' ops are
  kept in, each read once: every pair of its steps asks (a function of
  n steps has n * n pairs)."""

  def __init__(self, function: ast.AST):
    self.function = function
    self._choices: Optional[List[Tuple[Set[str], Set[str]]]] = None
    self._ranges: Optional[List[Tuple[Set[str], Set[str]]]] = None
    self._kept: Dict[int, Optional[str]] = {}

  def kept_as(self, call: ast.Call) -> Optional[str]:
    """`_kept_as` of `call` in the function, read once."""
    if id(call) not in self._kept:
      self._kept[id(call)] = _kept_as(call, self.function)
    return self._kept[id(call)]

  def choices(self) -> List[Tuple[Set[str], Set[str]]]:
    """`_choices` of the function, read once."""
    if self._choices is None:
      self._choices = list(_choices(self.function))
    return self._choices

  def later(self, one: ast.Call, other: ast.Call) -> bool:
    """Whether a test of a loop's counter picks the op of `other` before
    its bound and that of `one` from it on, each in one arm only."""
    mine, theirs = self.kept_as(one), self.kept_as(other)
    if mine is None or theirs is None or mine == theirs:
      return False
    if self._ranges is None:
      self._ranges = list(_ranges(self.function))
    return any(theirs in before and mine in after and not (
        mine in before or theirs in after) for before, after in self._ranges)

  def apart(self, one: ast.Call, other: ast.Call) -> bool:
    """Whether a stage test in the function picks between the ops of two
    of its steps, one in each arm: they run apart."""
    mine, theirs = self.kept_as(one), self.kept_as(other)
    if mine is None or theirs is None or mine == theirs:
      return False
    return any(mine in a and theirs in b and not (
        mine in b or theirs in a) or theirs in a and mine in b and not (
            theirs in b or mine in a) for a, b in self.choices())


def picks(function: ast.AST) -> bool:
  """Whether `function` picks between names by a stage test at all."""
  return next(_choices(function), None) is not None


def built_on(project: Project, upper: Set[str], lower: Set[str],
             cache: Dict[Tuple[str, ...], bool], near: List[ast.AST]) -> bool:
  """Whether a function around the step (`near`) or, by literal scopes,
  of the project builds a scope of `upper` on what a scope of `lower`
  computes (its block reads the names the lower block assigns)."""
  if not upper or not lower:
    return False
  if any(_builds_on(function, upper, lower) for function in near):
    return True
  upper = {s for s in upper if not s.startswith("=")}
  lower = {s for s in lower if not s.startswith("=")}
  key = (*sorted(upper), "|", *sorted(lower))
  if upper and lower and key not in cache:
    cache[key] = any(_builds_on(path[-1], upper, lower)
                     for module in project.all_modules_with(
                         [*upper, *lower])[:_MODULES]
                     for path in module.functions())
  return cache.get(key, False)


def _builds_on(function: ast.AST, upper: Set[str], lower: Set[str]) -> bool:
  built = _stage_values.scopes_built(function)
  above = [b for b in built if b.scope in upper]
  below = [b for b in built if b.scope in lower]
  if not above or not below:
    return False
  fed = _stage_values.names_fed(function, above)
  start = min(getattr(b.node, "lineno", 0) for b in above)
  return any(_stage_values.names_assigned(b.node) & fed
             for b in below
             if (getattr(b.node, "end_lineno", 0) or 0) < start)


# What reads a collection of variables by scope, and where its scope is.
_READERS = {"get_collection": 1, "trainable_variables": 0,
            "global_variables": 0}


def computed_scopes(node: ast.AST) -> Set[str]:
  """The computed scopes a list reads its variables by
  (`tf.trainable_variables(self.name)`), as `=` and their text: where
  the model is built under the same text, the same scope."""
  found: Set[str] = set()
  for each in _scopes.walk(node):
    if isinstance(each, ast.Call) and _names.call_name(each) in _READERS:
      at = _READERS[_names.call_name(each) or ""]
      given = [k.value for k in each.keywords if k.arg == "scope"] or (
          each.args[at:at + 1])
      if given and not isinstance(given[0], ast.Constant):
        found.add(f"={ast.unparse(given[0])}")
  return found


def _helper_calls(scope: _scopes.Scope
                  ) -> Tuple[List[ast.Call], Optional[ast.AST]]:
  """The calls of the function that `scope` is, and where they are
  looked for: a nested function's in the function around it (`loss3()`
  of `def loss3(): ...`), a method's in its class (`self.stage2()`), a
  module's function's in its module (`train_stage2()`); found once per
  function (each pair of steps asks)."""
  return scope.once((_helper_calls, 0, 0),
                    lambda: _find_helper_calls(scope))


def _find_helper_calls(scope: _scopes.Scope
                       ) -> Tuple[List[ast.Call], Optional[ast.AST]]:
  node, parent = scope.node, scope.parent
  if parent is None or not isinstance(node, (
      ast.FunctionDef, ast.AsyncFunctionDef)):
    return [], None
  if isinstance(parent.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return [n for n in parent.nodes if isinstance(n, ast.Call) and (
        isinstance(n.func, ast.Name)) and n.func.id == node.name], parent.node
  if scope.cls is not None:
    region: ast.AST = scope.cls.node
    return list(_calls_in(region, parent).get((True, node.name), ())), region
  if isinstance(parent.node, ast.Module):
    return list(_calls_in(parent.node, parent).get(
        (False, node.name), ())), parent.node
  return [], None


def _calls_in(region: ast.AST, keeper: _scopes.Scope
              ) -> Dict[Tuple[bool, str], List[ast.Call]]:
  """The calls of a class's or module's code by the name they call,
  `(True, name)` for `self.name(...)`, `(False, name)` for `name(...)`:
  read once a region (kept in `keeper`), however many functions ask."""
  return keeper.once((_calls_in, 0, id(region)),
                     lambda: _read_calls(region))


def _read_calls(region: ast.AST) -> Dict[Tuple[bool, str], List[ast.Call]]:
  found: Dict[Tuple[bool, str], List[ast.Call]] = {}
  for n in _scopes.walk(region):
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
      found.setdefault((False, n.func.id), []).append(n)
    elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
        _names.dotted(n.func.value) == "self"):
      found.setdefault((True, n.func.attr), []).append(n)
  return found


def _arms(region: ast.AST, keeper: _scopes.Scope
          ) -> Dict[int, Set[Tuple[int, bool]]]:
  """The arms of the `if` statements of `region` each call is in, as (the
  `if`, whether its `else`), by the call; read once a region (kept in
  `keeper`), however many pairs of steps ask."""
  return keeper.once((_arms, 0, id(region)), lambda: _read_arms(region))


def _read_arms(region: ast.AST) -> Dict[int, Set[Tuple[int, bool]]]:
  found: Dict[int, Set[Tuple[int, bool]]] = {}
  for node in _scopes.walk(region):
    if isinstance(node, ast.If):
      for orelse, body in ((False, node.body), (True, node.orelse)):
        for each in (n for stmt in body for n in _scopes.walk(stmt)):
          if isinstance(each, ast.Call):
            found.setdefault(id(each), set()).add((id(node), orelse))
  return found


def helpers_apart(one: _scopes.Scope, other: _scopes.Scope) -> bool:
  """Whether two steps are built in two helpers (nested functions,
  methods, a module's functions) that the arms of one `if` call, each
  once (`if self.finetune == -1: loss3() elif ...: loss2() else:
  loss1()`): one run builds one."""
  if one is other or one.node is other.node:
    return False
  (mine, region), (theirs, there) = _helper_calls(one), _helper_calls(other)
  if len(mine) != 1 or len(theirs) != 1 or region is None or (
      region is not there):
    return False
  arms = _arms(region, one.parent or one)
  mine_in, theirs_in = arms.get(id(mine[0]), set()), arms.get(
      id(theirs[0]), set())
  return any((node, not orelse) in theirs_in for node, orelse in mine_in)


def near_functions(scope: _scopes.Scope) -> List[ast.AST]:
  """The functions around a step, innermost first: where its model is
  built when the step is built beside it."""
  found: List[ast.AST] = []
  place: Optional[_scopes.Scope] = scope
  while place is not None and len(found) < 3:
    if isinstance(place.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      found.append(place.node)
    place = place.parent
  return found


def any_helpers_apart(scopes: List[_scopes.Scope]) -> bool:
  """Whether the steps of some two of `scopes` run apart
  (`helpers_apart`); each distinct scope read once."""
  distinct = list({id(s): s for s in scopes if s.parent is not None}.values())
  if len(distinct) < 2:
    return False
  # By (region, `if`, arm): the functions whose one call is in that arm;
  # two apart are two functions in the two arms of one `if` (a pair at a
  # time read every function again for every other: quadratic).
  called: Dict[Tuple[int, int, bool], Set[int]] = {}
  for scope in distinct:
    mine, region = _helper_calls(scope)
    if len(mine) != 1 or region is None:
      continue
    for node, orelse in _arms(region, scope.parent or scope).get(
        id(mine[0]), set()):
      called.setdefault((id(region), node, orelse), set()).add(id(scope.node))
  return any(other and not (len(body) == len(other) == 1 and body == other)
             for (region, node, orelse), body in called.items()
             if not orelse
             for other in [called.get((region, node, True), set())])


Item = TypeVar("Item")


def module_functions(items: List[Tuple[_scopes.Scope, Item]]
                     ) -> List[Tuple[ast.AST, List[Item]]]:
  """The items of a module's own functions (a script's `pretrain()` and
  `finetune()`), grouped by module where the arms of one `if` call two
  of them (`helpers_apart`): a stage each, one run each."""
  by_module: Dict[int, Tuple[ast.AST, List[Tuple[_scopes.Scope, Item]]]] = {}
  for scope, item in items:
    parent = scope.parent
    if parent is not None and scope.cls is None and isinstance(
        parent.node, ast.Module) and isinstance(scope.node, (
            ast.FunctionDef, ast.AsyncFunctionDef)):
      by_module.setdefault(id(parent.node), (parent.node, []))[1].append(
          (scope, item))
  return [(node, [item for _, item in pairs])
          for node, pairs in by_module.values()
          if any_helpers_apart([scope for scope, _ in pairs])]
