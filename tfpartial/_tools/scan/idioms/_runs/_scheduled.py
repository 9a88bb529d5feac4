"""A step trained alone for part of a run, its op chosen against another
step's by a loop's counter (`if step < 10000: train_op = train_sr`
`else: train_op = train_all`, `if epoch < end_to_end_start:`). While the
step's op runs, only its list trains and what it leaves out (a flow
network whose output the trained network reads, pretrained embeddings)
stays fixed. Warm-up schedules that train a head before the whole model
do the same. Ops run side by side in one loop (a GAN's halves, `if step
% 5 == 0`) are chosen by no ordered test of the counter (after a warm-up,
`epoch >= 100 and step % 2 == 0`, only the `else` arm runs alone, during
the warm-up), and a test of a configuration (`if self.optim == 'adam':`
around one optimizer's steps, the other's whole-model step in the
`else`) picks no part of a run. The test may choose the ops through
flags its arms set (`if epoch <= 30: single = True ... else: single =
False`, then `if single: run(base_op)` later in the loop)."""

from __future__ import annotations

import ast
import dataclasses
from typing import (Callable, Dict, Iterator, List, Optional, Sequence, Set,
                    Tuple)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_ORDERED = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def chosen_apart(call: ast.Call, scope: _scopes.Scope,
                 others: List[ast.Call]) -> bool:
  """Whether an ordered test of a loop's counter chooses the op `call`
  makes in one arm and another step's op in the other, itself or by
  the flags it sets (`_Flags.chosen`)."""
  kept = _facts(scope, scope.node).kept
  mine = kept.get(id(call))
  theirs = {kept[id(o)] for o in others if id(o) in kept} - {mine}
  if mine is None or not theirs:
    return False
  for keeper, home in _homes(scope, mine):
    for alone, beside in _facts(keeper, home).arms:
      if mine in alone and mine not in beside and theirs & beside:
        return True
  return False


def part_chosen_apart(chosen: ast.AST, scope: _scopes.Scope,
                      call: ast.Call, is_step: Callable[[ast.Call], bool],
                      var_list_of: Callable[[ast.Call], Optional[ast.AST]]
                      ) -> bool:
  """Whether a list is part of another step's list of the same function
  (`list(params.values())` within `list(params.values()) + [usr_embs,
  mov_embs]`) and the two ops are chosen apart: the step trains alone
  what the other trains with more, the rest stays fixed meanwhile."""
  facts = _facts(scope, scope.node)
  if id(call) not in facts.kept or not facts.arms and not any(
      _facts(keeper, home).arms
      for keeper, home in _homes(scope, facts.kept[id(call)])):
    return False
  text = ast.unparse(chosen)
  return any(
      node is not call and is_step(node) and (
          _within(text, var_list_of(node))) and chosen_apart(
              call, scope, [node])
      for node in facts.calls)


@dataclasses.dataclass
class _Facts:
  """What a function or class holds, read once: the name each call's
  result is kept in, its calls, the arms of its counter tests as (an arm
  that runs alone for a part of the run, the other arm): each way round,
  or only the `else` after a warm-up that then alternates."""

  kept: Dict[int, str]
  calls: List[ast.Call]
  arms: List[Tuple[Set[str], Set[str]]]


def _facts(keeper: _scopes.Scope, home: ast.AST) -> _Facts:
  """The facts of `home`, read once per scan: kept by the scope `keeper`
  (the function's own, or the scope its class is defined in), so they
  go with the scan's scopes."""
  info = None if isinstance(home, ast.ClassDef) else (
      _scopes.enclosing_class(keeper))
  owner = home if info is None else info.node
  method = _scopes.enclosing_method(keeper) if info is not None else None
  # A class's flags are counted once, kept where the class is defined.
  holder = method.parent if method is not None and (
      method.parent is not None) else keeper
  return keeper.once(("scheduled facts", home, 0),
                     lambda: _read_facts(home, owner, holder))


def _self_counts(holder: _scopes.Scope, owner: ast.AST) -> Dict[str, int]:
  """How often each `self.flag` is assigned in `owner` (a class less its
  `__init__`, or a function), counted once per owner and scan: every
  method of a class asks, and a walk of the class per method was
  quadratic in its methods."""

  def count() -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for node in _outside_init(owner):
      key = _flag(node) if isinstance(node, ast.Attribute) and isinstance(
          node.ctx, ast.Store) else None
      if key is not None:
        counts[key] = counts.get(key, 0) + 1
    return counts

  counts = holder.once(("scheduled self flags", owner, 0), count)
  assert isinstance(counts, dict)
  return counts


def _read_facts(home: ast.AST, owner: ast.AST,
                holder: _scopes.Scope) -> _Facts:
  """The facts of `home`, its `self.` flags counted over `owner` (the
  class of a method, else `home` itself)."""
  nodes = list(_scopes.walk(home))
  kept = {id(call): name for n in nodes if isinstance(n, ast.Assign) and (
      len(n.targets) == 1) for call in _made(n.value)
          for name in [_names.dotted(n.targets[0])] if name}
  counters = {name for n in nodes if isinstance(n, (ast.For, ast.While))
              for name in _counters(n)}
  arms: List[Tuple[Set[str], Set[str]]] = []
  flags = _Flags(nodes, _self_counts(holder, owner)) if counters else None
  for n in nodes if flags else []:
    if flags and isinstance(n, (ast.If, ast.IfExp)) and n.orelse:
      counted = _counted(n.test, counters)
      if not counted and not _warm_up_then_every_nth(n.test, counters):
        continue
      body, orelse = flags.chosen(n, (
          _read(_listed(n.body)), _read(_listed(n.orelse))))
      arms += [(body, orelse), (orelse, body)] if counted else [
          (orelse, body)]
  return _Facts(kept, [n for n in nodes if isinstance(n, ast.Call)], arms)


class _Flags:
  """The flags of a function or class, read once: each `if flag:` by its
  flag's name, how often each name is assigned (a bare name in the
  function, `self.flag` in any method of the class but `__init__`, whose
  default is set before any loop and changes no part of the run), the
  innermost loop around each node."""

  def __init__(self, nodes: List[ast.AST], self_counts: Dict[str, int]):
    self.ifs: Dict[str, List[Tuple[ast.If, Set[str], Set[str]]]] = {}
    self.assigned: Dict[str, int] = {}
    self.loop: Dict[int, ast.AST] = {}
    for node in nodes:
      if isinstance(node, ast.If) and _flag(node.test):
        arms = (_read(node.body), _read(node.orelse))
        negated = isinstance(node.test, ast.UnaryOp)  # `if not flag:`.
        self.ifs.setdefault(_flag(node.test) or "", []).append(
            (node, *(arms[::-1] if negated else arms)))
      elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        self.assigned[node.id] = self.assigned.get(node.id, 0) + 1
      elif isinstance(node, (ast.For, ast.While)):
        self.loop.update((id(n), node) for n in _scopes.walk(node))
    for key, count in self_counts.items():
      self.assigned[key] = self.assigned.get(key, 0) + count

  def chosen(self, test: ast.AST, arms: Tuple[Set[str], Set[str]]
             ) -> Tuple[Set[str], Set[str]]:
    """The arms of a counter test `test`, each with what the flags it
    sets choose (`if epoch <= 30: single = True; multi = False else:
    single = False; multi = True`, then `if single: run(base_op)`): a
    flag one arm turns on and the other off, assigned nowhere else,
    runs what an `if flag:` after the test in its loop holds in the
    first arm's part of the run, and what its `else:` holds in the
    other's."""
    one, other = (_switches(arm) for arm in (
        _listed(getattr(test, "body", None)), _listed(
            getattr(test, "orelse", None))))
    loop = self.loop.get(id(test))
    chosen: Tuple[Set[str], Set[str]] = (set(arms[0]), set(arms[1]))
    if loop is None:
      return chosen
    end = getattr(loop, "end_lineno", 0) or 0
    for name, on in one.items():
      if other.get(name) is not (not on) or self.assigned.get(name) != 2:
        continue
      for node, body, orelse in self.ifs.get(name, []):
        if getattr(test, "end_lineno", 0) < node.lineno <= end:
          chosen[0 if on else 1].update(body)
          chosen[1 if on else 0].update(orelse)
    return chosen


def _outside_init(owner: ast.AST) -> Iterator[ast.AST]:
  """The nodes of a function, or of a class less its `__init__`."""
  init = {id(n) for method in getattr(owner, "body", []) if isinstance(
      owner, ast.ClassDef) and isinstance(method, ast.FunctionDef) and (
          method.name == "__init__") for n in _scopes.walk(method)}
  return (n for n in _scopes.walk(owner) if id(n) not in init)


def _flag(node: ast.AST) -> Optional[str]:
  """The flag a test reads or a target sets: `flag`, `self.flag`, and
  `not` either (a test only)."""
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
    node = node.operand
    if isinstance(node, ast.UnaryOp):
      return None
  name = _names.dotted(node) if isinstance(
      node, (ast.Name, ast.Attribute)) else None
  return name if name is not None and (
      "." not in name or name.count(".") == 1 and name.startswith(
          "self.")) else None


def _switches(arm: Sequence[ast.AST]) -> Dict[str, bool]:
  """The flags an arm's own statements set to `True` or `False`
  (`single = True`, `self.single = True`, `single, multi = True,
  False`)."""
  found: Dict[str, bool] = {}
  for statement in arm:
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
      continue
    target, value = statement.targets[0], statement.value
    pairs = list(zip(target.elts, value.elts)) if isinstance(
        target, ast.Tuple) and isinstance(value, ast.Tuple) and len(
            target.elts) == len(value.elts) else [(target, value)]
    for each, given in pairs:
      name = _flag(each) if not isinstance(each, ast.UnaryOp) else None
      if name is not None and isinstance(given, ast.Constant) and (
          isinstance(given.value, bool)):
        found[name] = given.value
  return found


def _made(value: ast.expr) -> List[ast.Call]:
  """The calls whose op a name keeps: the value's own, or either arm's
  of a choice (`train_op = opt.minimize(...) if use_net else None`: the
  op is that step's wherever it runs)."""
  if isinstance(value, ast.IfExp):
    return [arm for arm in (value.body, value.orelse)
            if isinstance(arm, ast.Call)]
  return [value] if isinstance(value, ast.Call) else []


def _within(text: str, other: Optional[ast.AST]) -> bool:
  """Whether `other` adds more to a list spelled `text`."""
  return other is not None and any(
      isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) and (
          ast.unparse(n.left) == text)
      for n in ast.walk(other))


def _listed(arm: object) -> Sequence[ast.AST]:
  return arm if isinstance(arm, list) else [arm] if isinstance(
      arm, ast.AST) else []


def _homes(scope: _scopes.Scope, name: str
           ) -> Iterator[Tuple[_scopes.Scope, ast.AST]]:
  """The step's function, or its class when the op is kept on `self`,
  each with the scope that keeps its facts."""
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  if name.startswith("self.") and place is not None and place.cls:
    yield place.cls.home, place.cls.node
  else:
    yield scope, scope.node


def _counters(loop: ast.AST) -> Set[str]:
  """The names a loop counts with: a `for` target, a `+=` in a `while`."""
  if isinstance(loop, ast.For):
    return {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
  return {n.target.id for n in ast.walk(loop) if isinstance(
      n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(
          n.target, ast.Name)}


def _counted(test: ast.expr, counters: Set[str]) -> bool:
  """`step < 10000`, `it >= warmup`: an ordered test of a counter, alone
  or with conditions that must hold too (`epoch < start + 50 and
  use_net`: the arm still runs only in that part of the run), unless
  one of them reads a counter through `%` (`it > 0 and it % n_critic ==
  0`: the arms alternate for the rest of the run, side by side)."""
  if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
    return not _every_nth(test, counters) and any(
        _counted(value, counters) for value in test.values)
  if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], _ORDERED))):
    return False
  sides = [test.left, test.comparators[0]]
  return any(isinstance(side, ast.Name) and side.id in counters and not (
      counters & _read([rest])) for side, rest in (sides, sides[::-1]))


def _warm_up_then_every_nth(test: ast.expr, counters: Set[str]) -> bool:
  """`epoch >= 100 and step % 2 == 0`: an ordered test of a counter and a
  test through `%`, both required. The `else` arm runs alone while the
  ordered test fails (the warm-up), then alternates; the body never runs
  alone. A bound of 0 or 1 (`epoch > 0`, `step >= 0`) holds from the
  first pass or the second: alternation from the start, no phase."""
  if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
    return False
  plain = [v for v in test.values if not _every_nth(v, counters)]
  return len(plain) < len(test.values) and any(
      _counted(v, counters) and not _first_passes(v) for v in plain)


def _first_passes(test: ast.expr) -> bool:
  """Whether an ordered test compares with a number of 1 at most."""
  return isinstance(test, ast.Compare) and any(
      isinstance(side, ast.Constant) and isinstance(side.value, (int, float))
      and not isinstance(side.value, bool) and side.value <= 1
      for side in [test.left, *test.comparators])


def _every_nth(test: ast.expr, counters: Set[str]) -> bool:
  """Whether `test` reads a counter through `%` (`step % 2 == 0`)."""
  return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and (
      counters & _read([n.left])) for n in ast.walk(test))


def _read(nodes: Sequence[ast.AST]) -> Set[str]:
  """The names and attribute chains read in some statements."""
  found: Set[str] = set()
  for statement in nodes:
    for node in ast.walk(statement):
      if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
          node.ctx, ast.Load):
        name = _names.dotted(node)
        if name is not None:
          found.add(name)
  return found
