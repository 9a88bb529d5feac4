"""Stages: a model trained in stages, where one run's steps train only
the new stage and the earlier stage, in its forward path, gets no update
(StackGAN's stage II on stage I's generator, a second net fed by a
first restored from its own training, a fine generator on a coarse
one).

What the code does tells a stage from a GAN's halves. Two steps are
runs apart when they sit in the branches of one test of a mode value
(`if mode == "train1": ... elif mode == "train2": ...`), under two
tests of one mode value (`if 'coarse' in opt.phase:`, `if 'fine' in
opt.phase:`), or are fetched by two methods that no loop calls together
(`train_stage1`, `train_stage2`); a GAN's halves alternate in one loop.
A step leaves another's variables behind when these feed the inputs of
what the step trains (`net2(net1(x))`), not only its loss (a teacher's
output), and no step of its own run trains them."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan.idioms._runs import _downstream
from tfpartial._tools.scan.idioms._runs import _forward
from tfpartial._tools.scan.idioms._runs import _inversion
from tfpartial._tools.scan.idioms._runs import _real_side
from tfpartial._tools.scan.idioms._runs import _sequential
from tfpartial._tools.scan.idioms._runs import _stage_calls

# What a model or a layer gives its variables by.
_OWN = {"variables", "trainable_variables", "trainable_weights", "weights"}
# Searches bounded: a slice of a loss reads at most this many values.
_BOUND = 400


@dataclasses.dataclass
class Training:
  """One step, as a stage sees it: what it trains and minimises."""

  call: ast.Call
  scope: _scopes.Scope
  var_list: ast.expr
  loss: ast.expr


@dataclasses.dataclass
class _Group:
  """What marks a group of variables where the model is run: the scopes
  a filter names (`'net1'`), the objects whose variables it takes
  (`coarse.variables`), the variables it lists by name (`[E]`)."""

  scopes: Set[str]
  objects: Set[str]
  names: Set[str]

  def __bool__(self) -> bool:
    return bool(self.scopes or self.objects or self.names)

  def meets(self, other: "_Group") -> bool:
    return bool(self.scopes & other.scopes or self.objects & other.objects
                or self.names & other.names)


def left_behind(flow: Flow, trainings: List[Training]
                ) -> List[Tuple[Training, ast.expr]]:
  """The trainings (one per run and group left out, the first) whose run
  leaves out the variables of an earlier stage that feed what they
  train, with where each chooses its variables."""
  by_home: Dict[int, List[Training]] = {}
  nodes: Dict[int, ast.AST] = {}
  for each in trainings:
    node = _home(each.scope)
    nodes[id(node)] = node
    by_home.setdefault(id(node), []).append(each)
  found: Dict[Tuple[int, ...], Tuple[Training, ast.expr]] = {}
  opened = _Opened(flow)
  groups = [(nodes[key], group) for key, group in by_home.items()] + (
      _chosen_stage.module_functions([(t.scope, t) for t in trainings]))
  for node, group in groups:
    home = _Home.of(node, group) if len(group) > 1 else None
    if home is not None:  # Else no mode is tested, no op fetched apart.
      home.together = opened.together
      _runs_apart(home, group, opened, found)
  return list(found.values())


def _runs_apart(home: "_Home", group: List[Training], opened: "_Opened",
                found: Dict[Tuple[int, ...], Tuple[Training, ast.expr]]
                ) -> None:
  """Adds to `found` the steps of one home leaving an earlier stage out,
  keyed by the home and the steps of that stage."""
  defs = _definitions(home.node)
  marks = [_marks(t, defs) for t in group]
  met: Dict[int, List[Training]] = {}

  def meeting(j: int) -> List[Training]:
    """The steps whose marks meet step `j`'s, found once per `j` (each
    pair asking anew was cubic in the stages of one home)."""
    if j not in met:
      met[j] = [group[k] for k, mark in enumerate(marks)
                if mark.meets(marks[j])]
    return met[j]

  fed: Dict[int, List[ast.AST]] = {}
  for i, step in enumerate(group):
    behind: List[int] = []
    for j, other in enumerate(group):
      if j == i or not marks[i] or not marks[j] or marks[j].meets(
          marks[i]) or not _apart(step, other, home) or _trained_with(
              step, meeting(j), home):
        continue
      if i not in fed:
        fed[i] = _inputs(step, marks[i], defs, opened)
      if any(_runs(n, marks[j], opened, step.scope) for n in fed[i]) or (
          _chosen_stage.built_on(opened.flow.project, marks[i].scopes,
                                 marks[j].scopes, opened.built,
                                 _chosen_stage.near_functions(step.scope))
      ) or _feeds_between(step, marks[i], marks[j], defs, opened) or (
          _forward.through(opened.flow.project, _slice([step.loss], defs, (
              _stage_calls.own_of(step.scope))), marks[i].scopes,
                           marks[j].scopes, _chosen_stage.near_functions(
                               step.scope), opened.forward)):
        behind.append(id(other.call))
    if behind and _fed_real(step, group, home, opened):
      continue  # A discriminator's real side: data, no earlier stage.
    if behind and _inversion.inverts(step.loss, lambda call: _runs(
        call, marks[i], opened, step.scope), fed.get(i) or _inputs(
            step, marks[i], defs, opened), defs):
      continue  # The earlier stage only makes the later one's pairs.
    run = (id(home.node), *sorted(behind))
    if behind and (run not in found or _position(step.call) < _position(
        found[run][0].call)):
      found[run] = (step, _chosen(step.var_list, step.call, defs))


def _fed_real(step: Training, group: List[Training], home: "_Home",
              opened: "_Opened") -> bool:
  """Whether the step's network is a discriminator given its real side
  by a network no step of its run trains (`_real_side`)."""
  partners = [o.var_list for o in group if o is not step and (
      o.scope is step.scope) and not _apart(step, o, home)]
  return _real_side.fed_real(opened.flow, step.scope, step.call, step.loss,
                             step.var_list, partners)


def _feeds_between(step: Training, mine: _Group, other: _Group,
                   defs: Dict[str, List[Tuple[ast.expr, int]]],
                   opened: "_Opened") -> bool:
  """Whether the step's loss runs the other group on what the step's
  own scopes made (`_downstream`)."""
  near = _chosen_stage.near_functions(step.scope)
  made = _downstream.made_in(near, mine.scopes)
  if not made:
    return False
  own = _stage_calls.own_of(step.scope)

  def runs_other(call: ast.Call) -> bool:
    callee = opened.flow.callee(call, step.scope)
    return _runs(call, other, opened, step.scope) or (
        callee is not None and _downstream.opens(callee, other.scopes))
  return _downstream.between(_slice([step.loss], defs, own), runs_other,
                             lambda given: _slice(given, defs, own), made)


@dataclasses.dataclass
class _Home:
  """Where a group of steps is built (a function, or a class whose
  methods build and fetch them), and how each step is placed there."""

  node: ast.AST
  branches: Dict[int, List[Tuple[ast.If, bool]]]
  kept: Dict[int, Optional[str]]
  # The attributes each method and loop of a class reads and assigns.
  uses: Dict[int, Tuple[Set[str], Set[str]]] = dataclasses.field(
      default_factory=dict)
  loops: List[ast.AST] = dataclasses.field(default_factory=list)
  # A stage test picks between ops (`_chosen_stage`), read once per home.
  picking: Optional[_chosen_stage.Picking] = None
  # The loops of the project, outside the class too (`_stage_calls`).
  together: Optional[_stage_calls.Together] = None
  # Where each function keeps and fetches ops (`_sequential`).
  order: _sequential.Order = dataclasses.field(
      default_factory=_sequential.Order)

  @classmethod
  def of(cls, node: ast.AST, group: List[Training]) -> Optional["_Home"]:
    """The placing of the steps, or None when they all run together."""
    ifs: Dict[int, List[ast.If]] = {}  # A function's `if` statements.
    for each in group:
      if id(each.scope) not in ifs:
        ifs[id(each.scope)] = [n for n in each.scope.nodes
                               if isinstance(n, ast.If)]
    branches = {id(t.call): _branches(t, ifs[id(t.scope)]) for t in group}
    kept = _kept(group) if isinstance(node, ast.ClassDef) else {}
    picks = _chosen_stage.picks(node)
    order = _sequential.Order()
    if not any(_mode_test(test.test) for found in branches.values()
               for test, _ in found) and sum(
                   name is not None for name in kept.values()) < 2 and (
                       not picks) and not _chosen_stage.any_helpers_apart(
                           [t.scope for t in group]) and not (
                               _sequential.any_before(
                                   [(t.call, t.scope) for t in group],
                                   order)):
      return None
    return cls(node, branches, kept, order=order, picking=(
        _chosen_stage.Picking(node) if picks else None))


def _home(scope: _scopes.Scope) -> ast.AST:
  """The class a method is of (its steps are built in one method and
  fetched in others), else the function."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if place.cls is not None:
      return place.cls.node
    place = place.parent
  return scope.node


def _position(node: ast.AST) -> Tuple[int, int]:
  return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


# A name as the code assigns it: `x`, `self.x` (`x[i] = ...` assigns x).
def _key(target: ast.AST) -> Optional[str]:
  while isinstance(target, (ast.Subscript, ast.Starred)):
    target = target.value
  name = _names.dotted(target)
  if name is None or name.count(".") > 1 or "." in name and not (
      name.startswith("self.")):
    return None
  return name


def _definitions(home: ast.AST) -> Dict[str, List[Tuple[ast.expr, int]]]:
  """Each name's assigned values in `home`, with their lines."""
  found: Dict[str, List[Tuple[ast.expr, int]]] = {}
  for node in _scopes.walk(home):
    if isinstance(node, ast.Assign):
      targets, value = list(node.targets), node.value
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and (
        node.value is not None):
      targets, value = [node.target], node.value
    elif isinstance(node, (ast.For, ast.AsyncFor)):
      targets, value = [node.target], node.iter
    else:
      continue
    while targets:
      target = targets.pop()
      if isinstance(target, (ast.Tuple, ast.List)):
        targets.extend(target.elts)  # `c0, self.G0 = ...`: each.
        continue
      key = _key(target)
      if key is not None:
        found.setdefault(key, []).append((value, node.lineno))
  return found


def _reaching(name: str, line: int,
              defs: Dict[str, List[Tuple[ast.expr, int]]]
              ) -> Optional[ast.expr]:
  """The nearest value assigned to `name` before `line` (the branch a
  step is in assigns its own list to the attribute others share)."""
  before = [(at, value) for value, at in defs.get(name, []) if at <= line]
  return max(before, key=lambda pair: pair[0])[1] if before else None


def _chosen(var_list: ast.expr, call: ast.Call,
            defs: Dict[str, List[Tuple[ast.expr, int]]]) -> ast.expr:
  """Where a step's list is chosen: its assignment, else the list."""
  name = _names.dotted(var_list)
  value = _reaching(name, call.lineno, defs) if name else None
  return value if value is not None else var_list


def _marks(step: Training, defs: Dict[str, List[Tuple[ast.expr, int]]]
           ) -> _Group:
  """What marks the variables a step trains where the model runs."""
  group = _Group(set(), set(), set())
  todo = [step.var_list]
  group.scopes.update(_chosen_stage.computed_scopes(step.var_list))
  seen: Set[int] = set()
  while todo and len(seen) < 32:
    node = todo.pop()
    if id(node) in seen:
      continue
    seen.add(id(node))
    name = _names.dotted(node)
    if name is not None:
      value = _reaching(name, step.call.lineno, defs)
      if value is not None:
        if _stage_calls.made_by_call(name, value):
          group.names.add(name)
        group.scopes.update(_chosen_stage.computed_scopes(value))
        todo.append(value)
        continue
    called = {id(c.func) for c in _scopes.walk(node) if isinstance(
        c, ast.Call)}  # `tf.trainable_variables()` is no model's.
    for each in _scopes.walk(node):
      if id(each) in called:
        continue
      if isinstance(each, ast.Constant) and isinstance(each.value, str) \
          and each.value.strip("/"):
        group.scopes.add(each.value.strip("/"))
      elif isinstance(each, ast.Attribute) and each.attr in _OWN:
        owner = _names.dotted(each.value)
        if owner is not None:
          group.objects.add(owner)
      elif isinstance(each, ast.List):
        group.names.update(e.id for e in each.elts if isinstance(e, ast.Name))
      elif isinstance(each, ast.BinOp):
        todo.extend([each.left, each.right])
  return group


def _span(node: ast.AST) -> Tuple[Tuple[int, int], Tuple[int, int]]:
  return ((getattr(node, "lineno", 0), getattr(node, "col_offset", 0)),
          (getattr(node, "end_lineno", 0) or 0,
           getattr(node, "end_col_offset", 0) or 0))


def _within(node: ast.AST, outer: ast.AST) -> bool:
  (start, end), (first, last) = _span(node), _span(outer)
  return first <= start and end <= last


def _branches(step: Training, ifs: List[ast.If]
              ) -> List[Tuple[ast.If, bool]]:
  """The `if` statements of its function around a step, inner first,
  each with whether the step is in its `else`."""
  found = [(node, bool(node.orelse) and _span(node.orelse[0])[0] <= _span(
      step.call)[0]) for node in ifs if _within(step.call, node) and not (
          _within(step.call, node.test))]
  return sorted(found, key=lambda pair: _span(pair[0])[0], reverse=True)


def _mode_test(test: ast.expr) -> Optional[Set[str]]:
  """The names a test of a mode value reads (`mode == "train2"`, `'fine'
  in opt.phase`, `mode in ["train1", "eval1"]`), or None: a mode is a
  string, not a step's parity or a flag."""
  compares = [n for n in _scopes.walk(test) if isinstance(n, ast.Compare)]
  if not compares or isinstance(test, ast.BoolOp):
    return None
  read: Set[str] = set()
  for compare in compares:
    sides = [compare.left, *compare.comparators]
    texts = [s for s in sides if isinstance(s, ast.Constant) and isinstance(
        s.value, str) or isinstance(s, (ast.List, ast.Tuple, ast.Set)) and (
            s.elts) and all(isinstance(e, ast.Constant) and isinstance(
                e.value, str) for e in s.elts)]
    values = [_names.dotted(s) for s in sides if s not in texts]
    if not texts or not values or None in values:
      return None
    read.update(v for v in values if v is not None)
  return read


def _apart(step: Training, other: Training, home: _Home) -> bool:
  """Whether two steps run apart: branches of one test of a mode, two
  tests of one mode value, or two methods fetching them that no loop
  calls together."""
  mine, theirs = home.branches[id(step.call)], home.branches[id(other.call)]
  shared = {id(node): orelse for node, orelse in theirs}
  for node, orelse in mine:  # The innermost `if` around both.
    if id(node) in shared:
      if shared[id(node)] != orelse:
        return _mode_test(node.test) is not None
      break
  own = [(node, _mode_test(node.test)) for node, _ in mine
         if id(node) not in shared]
  around = {id(node) for node, _ in mine}
  for node, _ in theirs:
    read = _mode_test(node.test) if id(node) not in around else None
    if read and any(names and names & read and ast.unparse(
        node.test) != ast.unparse(test.test) for test, names in own):
      return True
  return isinstance(home.node, ast.ClassDef) and _fetched_apart(
      home.kept.get(id(step.call)), home.kept.get(id(other.call)), home.node,
      home) or home.picking is not None and home.picking.apart(
          step.call, other.call) or _chosen_stage.helpers_apart(
              step.scope, other.scope) or _sequential.before(
                  (other.call, other.scope), (step.call, step.scope),
                  home.order)


def _kept(group: List[Training]) -> Dict[int, Optional[str]]:
  """The attribute of `self` each step's op is kept in (`self.G1_optim =
  opt.minimize(...)`), by the step's call."""
  wanted = {id(t.call) for t in group}
  found: Dict[int, Optional[str]] = {}
  for scope in {id(t.scope): t.scope for t in group}.values():
    for node in scope.nodes:
      if isinstance(node, ast.Assign) and len(node.targets) == 1:
        name = _key(node.targets[0])
        for call in _scopes.walk(node.value):
          if id(call) in wanted and name and name.startswith("self."):
            found[id(call)] = name
  return found


def _fetched_apart(mine: Optional[str], theirs: Optional[str],
                   cls: ast.ClassDef, home: "_Home") -> bool:
  """Whether the methods fetching two steps' ops are disjoint, and no
  loop of the class runs both (`stage1()` in one loop, `stage2()` in
  the next; a GAN's `train_d()` and `train_g()` share one)."""
  if mine is None or theirs is None or mine == theirs:
    return False
  uses, loops = home.uses, home.loops
  if not uses:
    loops.extend(n for n in _scopes.walk(cls) if isinstance(
        n, (ast.For, ast.While, ast.AsyncFor)))
    uses.update({id(n): _uses(n) for n in [*cls.body, *loops] if isinstance(
        n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.For, ast.While,
            ast.AsyncFor))})
  methods = [m for m in cls.body
             if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
  readers = [{m.name for m in methods if name in uses[id(m)][0] and (
      name not in uses[id(m)][1])} for name in (mine, theirs)]
  if not all(readers) or readers[0] & readers[1]:
    return False
  for loop in loops:
    read, _ = uses[id(loop)]
    if all(name in read or {f"self.{m}" for m in fetching} & read
           for name, fetching in zip((mine, theirs), readers)):
      return False
  return home.together is None or not home.together.called_together(
      *readers)


def _uses(node: ast.AST) -> Tuple[Set[str], Set[str]]:
  """The `self.` attributes a method or a loop reads (its calls of the
  object's methods too) and those it assigns."""
  read: Set[str] = set()
  written: Set[str] = set()
  for each in _scopes.walk(node):
    if isinstance(each, ast.Attribute) and isinstance(
        each.value, ast.Name) and each.value.id == "self":
      (written if isinstance(each.ctx, ast.Store) else read).add(
          f"self.{each.attr}")
  return read, written


def _trained_with(step: Training, meeting: List[Training], home: _Home
                  ) -> bool:
  """Whether a step that may run with `step` trains some of a group:
  one of `meeting`, the steps whose marks meet the group's."""
  return any(other is not step and not _apart(step, other, home)
             for other in meeting)


def _slice(roots: List[ast.expr], defs: Dict[str, List[Tuple[ast.expr, int]]],
           own: Optional[Dict[str, ast.AST]] = None) -> Iterator[ast.AST]:
  """The nodes of what `roots` are computed from, by the assignments of
  their names (`loss` of `out` of `net2(h)` of `h = net1(x)`) and what
  the class's `own` methods they call return."""
  todo = list(roots)
  seen: Set[int] = set()
  names: Set[str] = set()
  spanned = _stage_calls.spans(own or {})
  while todo and len(seen) < _BOUND:
    root = todo.pop()
    if id(root) in seen:
      continue
    seen.add(id(root))
    for node in _scopes.walk(root):
      yield node
      todo.extend(_stage_calls.returned(node, own or {}))
      name = _key(node) if isinstance(node, (ast.Name, ast.Attribute)) and (
          isinstance(getattr(node, "ctx", None), ast.Load)) else None
      if name is not None and "." not in name and spanned:
        todo.extend(value for value, at in defs.get(name, [])
                    if _stage_calls.same_method(spanned, at, _position(
                        node)[0]))
      elif name is not None and name not in names:
        names.add(name)
        todo.extend(value for value, _ in defs.get(name, []))


class _Opened:
  """The literal scopes each function a call runs opens (`with
  tf.variable_scope('g1')`), each read once."""

  def __init__(self, flow: Flow):
    self.flow = flow
    self.by_call: Dict[int, Set[str]] = {}
    self.here: Dict[int, Set[int]] = {}  # A scope -> its own nodes.
    self.built: Dict[Tuple[str, ...], bool] = {}  # `_chosen_stage`'s.
    self.together = _stage_calls.Together(flow.project)
    self.forward: Dict[Tuple[str, ...], Set[str]] = {}  # `_forward`'s.

  def scopes(self, call: ast.Call, scope: _scopes.Scope) -> Set[str]:
    if id(call) not in self.by_call:
      if id(scope) not in self.here:
        self.here[id(scope)] = {id(n) for n in scope.nodes}
      callee = self.flow.callee(call, scope) if id(call) in self.here[
          id(scope)] else None  # The flow resolves a call where it is.
      self.by_call[id(call)] = {
          n.args[0].value for n in _scopes.walk(callee) if isinstance(
              n, ast.Call) and _names.call_name(n) in _names.TF_SCOPES and n.args
          and isinstance(n.args[0], ast.Constant) and isinstance(
              n.args[0].value, str)} if callee is not None else set()
    return self.by_call[id(call)]


def _runs(node: ast.AST, group: _Group, opened: _Opened,
          scope: _scopes.Scope) -> bool:
  """Whether `node` runs the group's variables: a call under its scope
  (`net2(h, scope="net2")`, a method opening `variable_scope('g1')`), a
  call of its model (`fine([x, h])`), a read of a listed variable."""
  if isinstance(node, (ast.Name, ast.Attribute)):
    return _key(node) in group.names
  if not isinstance(node, ast.Call):
    return False
  if group.names and _stage_calls.runs_named(
      node, _stage_calls.methods(_home(scope)), group.names):
    return True
  func = _names.dotted(node.func)
  if func is not None and (func in group.objects or func.rpartition(".")[
      0] in group.objects and not func.endswith(tuple(_OWN))):
    return True
  given = [a.value for a in [*node.args, *(k.value for k in node.keywords)]
           if isinstance(a, ast.Constant) and isinstance(a.value, str)]
  return any(a.strip("/") in group.scopes for a in given) or bool(
      group.scopes and opened.scopes(node, scope) & group.scopes)


def _inputs(step: Training, mine: _Group,
            defs: Dict[str, List[Tuple[ast.expr, int]]], opened: _Opened
            ) -> List[ast.AST]:
  """What the inputs of what the step trains are computed from, in its
  loss (`h`, `net1(x)` of `net2(h)`): not what only the loss reads (a
  teacher's output)."""
  own = _stage_calls.own_of(step.scope)
  given = [value for node in _slice([step.loss], defs, own)
           if isinstance(node, ast.Call) and _runs(
               node, mine, opened, step.scope)
           for value in [*node.args, *(k.value for k in node.keywords)]]
  return list(_slice(given, defs, own)) if given else []

