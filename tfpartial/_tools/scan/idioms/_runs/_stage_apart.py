"""Whether two steps of one home run apart: in the branches of one test
of a mode value, under two tests of one mode value, fetched by two
methods that no loop calls together, picked by a stage test
(`_chosen_stage`) or run one after the other (`_sequential`); where the
steps of a home are placed (`Home`). Part of `_stages`."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan.idioms._runs import _sequential
from tfpartial._tools.scan.idioms._runs import _stage_calls
from tfpartial._tools.scan.idioms._runs import _stage_marks
from tfpartial._tools.scan.idioms._runs._stage_marks import Training


@dataclasses.dataclass
class Home:
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
  def of(cls, node: ast.AST, group: List[Training]) -> Optional["Home"]:
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
    if not any(mode_test(test.test) for found in branches.values()
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


def mode_test(test: ast.expr) -> Optional[Set[str]]:
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


def apart(step: Training, other: Training, home: Home) -> bool:
  """Whether two steps run apart: branches of one test of a mode, two
  tests of one mode value, or two methods fetching them that no loop
  calls together."""
  mine, theirs = home.branches[id(step.call)], home.branches[id(other.call)]
  shared = {id(node): orelse for node, orelse in theirs}
  for node, orelse in mine:  # The innermost `if` around both.
    if id(node) in shared:
      if shared[id(node)] != orelse:
        return mode_test(node.test) is not None
      break
  own = [(node, mode_test(node.test)) for node, _ in mine
         if id(node) not in shared]
  around = {id(node) for node, _ in mine}
  for node, _ in theirs:
    read = mode_test(node.test) if id(node) not in around else None
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
        name = _stage_marks.assigned_key(node.targets[0])
        for call in _scopes.walk(node.value):
          if id(call) in wanted and name and name.startswith("self."):
            found[id(call)] = name
  return found


def _fetched_apart(mine: Optional[str], theirs: Optional[str],
                   cls: ast.ClassDef, home: "Home") -> bool:
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


def trained_with(step: Training, meeting: List[Training], home: Home
                  ) -> bool:
  """Whether a step that may run with `step` trains some of a group:
  one of `meeting`, the steps whose marks meet the group's."""
  return any(other is not step and not apart(step, other, home)
             for other in meeting)
