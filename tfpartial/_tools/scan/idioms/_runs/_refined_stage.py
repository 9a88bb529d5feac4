"""A two-stage model whose second stage refines the first's output, the
first stage trained only before a bound of the loop's counter (PG2's
pose-guided generator: `G1, DiffMap, self.G_var1, self.G_var2 =
Generator(x, pose)`, `G2 = G1 + DiffMap`; `g_optim1` over `G_var1` run
while `step < 22000`, then only `g_optim2` over `G_var2` and the
discriminator's step): from the bound on, the first stage, whose output
is a term of the second's, stays fixed though the loss still reaches it.

What the code does decides: one call makes both stages (their outputs and
their variable lists), the second stage's output is the first's plus its
own (a residual refinement, not a teacher's output that a loss compares
against), the loop's counter picks the first stage's op before the bound
and the second's after it, and no step of the class that may run from the
bound on trains the first stage's list: every step call counts, one with
no list training every variable, an apply of gradients the list it zips
them with, a list not read to names (a filter, a call) as if it held the
first stage's. What the rule reads of a class is read once. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan.idioms._runs import _refined_facts
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, Step, _class_of, _loss_node, var_list_of)

# The labels of a finding's reads of the second stage's op (from the
# bound on) and of the first's (before it).
REFINED = "refined"
FIRST = "refined_first"


@dataclasses.dataclass
class _Step:
  """A step call as this rule reads it, wrapped by a method or not."""

  call: ast.Call
  scope: _scopes.Scope
  var_list: Optional[ast.AST]


def hits(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """The second stage's op of each such model, once: in the classes the
  steps are built in, every step call of their methods (a method that
  builds several steps from its parameters is read call by call)."""
  classes = {id(info): info for step in steps
             for info in [_class_of(step.scope)] if info is not None}
  found: List[_idiom.Hit] = []
  for info in classes.values():
    calls = [_Step(call, method, var_list_of(call))
             for method in info.methods.values()
             for call in analysis.calls(method)
             if _names.call_name(call) in STEPS]
    if len([step for step in calls if step.var_list is not None
            and _loss_node(step.call) is not None]) > 1:
      found += _in_class(info, calls)
  return found


def _in_class(info: _scopes.ClassInfo, calls: List[_Step]
              ) -> List[_idiom.Hit]:
  """At the loop's read of each second stage's op, once."""
  ranges: Dict[int, List[Tuple[Set[str], Set[str]]]] = {
      id(method): list(_chosen_stage._ranges(method.node))
      for method in info.methods.values()}
  every = [pair for found in ranges.values() for pair in found]
  if not every:
    return []
  read = _refined_facts.of(info)
  ops = {id(step.call): _op_of(read, step) for step in calls}
  late = _late_lists(read, calls, ops, every)
  if late is None:  # A step run from the bound on may train them all.
    return []
  group = [step for step in calls if step.var_list is not None
           and _loss_node(step.call) is not None]
  lists = {id(step.call): _outer(read, step, step.var_list)
           for step in group}
  picked = {name for pair in every for arm in pair for name in arm}
  # Only the steps whose ops a counter's test picks pair up, by list.
  chosen: Dict[str, List[_Step]] = {}
  for step in group:
    name = lists[id(step.call)]
    if name is not None and ops[id(step.call)] in picked:
      chosen.setdefault(name, []).append(step)
  named = set(lists.values()) - {None}
  reads = _reads(info, ranges, 1)
  firsts = _reads(info, ranges, 0)
  found: Dict[int, _idiom.Hit] = {}
  for names, scope in read.made:
    outputs = [n for n in names if n is not None and n not in named]
    if len(outputs) != 2:
      continue
    held = [n for n in names if n in chosen]
    for index, theirs in enumerate(held):
      for mine in held[index + 1:]:
        if mine == theirs or theirs in late:
          continue
        for first, second in _refining(read, chosen[theirs], chosen[mine],
                                       ops, every, read.fed(scope, outputs)):
          at = reads.get(ops[id(second.call)] or "")
          if at is not None and id(at[0]) not in found:
            labels: Dict[str, ast.AST] = {"filtered": at[0], REFINED: at[0]}
            before = firsts.get(ops[id(first.call)] or "")
            if before is not None:
              labels[FIRST] = before[0]
            found[id(at[0])] = _idiom.Hit(at[0], at[1], second.call, labels)
  return list(found.values())


def _refining(read: _refined_facts.ClassFacts, firsts: List[_Step],
              seconds: List[_Step], ops: Dict[int, Optional[str]],
              ranges: List[Tuple[Set[str], Set[str]]], fed: Set[str]
              ) -> Iterator[Tuple[_Step, _Step]]:
  """The second stage's steps whose loss the sum of the two outputs
  feeds and whose op a counter's test picks from the bound on where it
  picks a first stage's before it, each with that first stage's step."""
  for second in seconds:
    loss = _outer(read, second, _loss_node(second.call))
    if loss is not None and loss in fed:
      first = next((first for first in firsts if _later(
          ops[id(second.call)], ops[id(first.call)], ranges)), None)
      if first is not None:
        yield first, second


def _reads(info: _scopes.ClassInfo,
           ranges: Dict[int, List[Tuple[Set[str], Set[str]]]], arm: int
           ) -> Dict[str, Tuple[ast.expr, _scopes.Scope]]:
  """The first read of each op in a method whose counter's test picks it
  before the bound (`arm` 0) or from it on (1; `self.sess.run(self.
  g_optim2)`), each method read once."""
  reads: Dict[str, Tuple[ast.expr, _scopes.Scope]] = {}
  for method in info.methods.values():
    wanted = {op for pair in ranges[id(method)] for op in pair[arm]} - set(
        reads)
    for node in _scopes.walk(method.node) if wanted else ():
      if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        name = _names.dotted(node)
        if name is not None and name in wanted:
          reads[name] = node, method
          wanted.discard(name)
  return reads


def _later(mine: Optional[str], theirs: Optional[str],
           ranges: List[Tuple[Set[str], Set[str]]]) -> bool:
  """Whether a counter's test picks `theirs` before its bound and `mine`
  from it on, each in one arm only."""
  return mine is not None and theirs is not None and mine != theirs and any(
      theirs in before and mine in after and not (
          mine in before or theirs in after) for before, after in ranges)


def _late_lists(read: _refined_facts.ClassFacts, calls: List[_Step],
                ops: Dict[int, Optional[str]],
                ranges: List[Tuple[Set[str], Set[str]]]) -> Optional[Set[str]]:
  """The lists, by name, that the class's steps that may run from the
  bound on train; None when one of them may train every variable."""
  names: Set[str] = set()
  for step in calls:
    if not _before_only(ops[id(step.call)], ranges):
      trained = read.parts(step.scope, step.var_list)
      if trained is None:
        return None
      names |= trained
  return names


def _before_only(op: Optional[str],
                 ranges: List[Tuple[Set[str], Set[str]]]) -> bool:
  """Whether a counter's test picks the op before its bound only."""
  return op is not None and any(op in before and op not in after
                                for before, after in ranges)


def _op_of(read: _refined_facts.ClassFacts, step: _Step) -> Optional[str]:
  """The `self.` attribute the step's op is kept in: assigned there, or
  returned by its method in a tuple that a method of the class unpacks
  into attributes (`self.g_optim1, ... = self._getOptimizer(...)`)."""
  node = read.kept(step.scope).get(id(step.call))
  if node is None:
    return None
  name = _names.dotted(node.targets[0])
  if name is not None and name.startswith("self."):
    return name
  if isinstance(node.targets[0], ast.Name):
    return _unpacked(read, step.scope, node.targets[0].id)
  return None


def _unpacked(read: _refined_facts.ClassFacts, scope: _scopes.Scope,
              local: str) -> Optional[str]:
  """The attribute a caller in the class unpacks the method's returned
  `local` into."""
  names = read.returned(scope)
  if names is None or names.count(local) != 1:
    return None
  index = names.index(local)
  for _, target, _ in read.unpacked.get(scope.name, []):
    if len(target.elts) == len(names):
      name = _names.dotted(target.elts[index])
      if name is not None and name.startswith("self."):
        return name
  return None


def _outer(read: _refined_facts.ClassFacts, step: _Step,
           node: Optional[ast.AST]) -> Optional[str]:
  """`node` (the step's list or loss) as the method that builds the
  model names it: a parameter of the step's method given by its caller
  in the class, else as written."""
  if node is None:
    return None
  if not isinstance(node, ast.Name) or node.id not in step.scope.params:
    return _names.dotted(node)
  given = read.argument(step.scope, node.id)
  return _names.dotted(given[0]) if given is not None else None



def message(hit: _idiom.Hit, step: str) -> str:
  """A finding's message, `step` naming the second stage's step: which
  op runs from the bound on in place of which (the discriminator's may
  run too: not "only")."""
  later = f"`{ast.unparse(hit.labels[REFINED])}`"
  first = hit.labels.get(FIRST)
  instead = (f"`{ast.unparse(first)}` no longer runs and {later} runs in "
             "its place") if first is not None else (
                 f"{later} runs in place of the first stage's op")
  return (f"from the loop's bound on {instead}: {step} trains the second "
          "stage, and the first, whose output is a term of the second's, "
          "stays fixed (no step run from the bound on trains it): whole "
          "variables only; exact as it is, not a drift; a candidate for a "
          "spec file")
