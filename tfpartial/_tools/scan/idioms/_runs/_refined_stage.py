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
bound on trains the first stage's list. A step may run from the bound on
unless every read of its op in the class lies in a before-arm of a
counter test; one with no list trains every variable, an apply of
gradients the list it zips them with, a method's step the lists of every
call site; a list built by a call (`tf.trainable_variables()`, a helper)
or a filter of such a list may hold any variable. Where an op read
outside the before-arms is made by a call that may build a step (a helper
of the project, a call not resolved) the rule says nothing. What the rule
reads of a class is read once. Part of `var-list-filter`."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan.idioms._runs import _refined_facts
from tfpartial._tools.scan.idioms._runs import _refined_phases
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, Step, _class_of, _loss_node, var_list_of)

# The labels of a finding's reads of the second stage's op (from the
# bound on) and of the first's (before it).
REFINED = "refined"
FIRST = "refined_first"


@dataclasses.dataclass
class _Step:
  """A step call as this rule reads it, wrapped by a method or not: with
  the index of the call site of its method that it is read for."""

  call: ast.Call
  scope: _scopes.Scope
  var_list: Optional[ast.AST]
  site: Optional[int] = None


def hits(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """The second stage's op of each such model, once: in the classes the
  steps are built in, every step call of their methods (a method that
  builds steps from its parameters is read once per call site)."""
  classes = {id(info): info for step in steps
             for info in [_class_of(step.scope)] if info is not None}
  found: List[_idiom.Hit] = []
  for info in classes.values():
    read = _refined_facts.of(info)
    calls = [_Step(call, method, var_list_of(call), site)
             for method in info.methods.values()
             for call in analysis.calls(method)
             if _names.call_name(call) in STEPS
             for site in _sites(read, method)]
    if len([step for step in calls if step.var_list is not None
            and _loss_node(step.call) is not None]) > 1:
      found += _in_class(analysis, info, read, calls)
  return found


def _sites(read: _refined_facts.ClassFacts, method: _scopes.Scope
           ) -> List[Optional[int]]:
  sites = read.unpacked.get(method.name, [])
  return list(range(len(sites))) if sites else [None]


def _in_class(analysis: Analysis, info: _scopes.ClassInfo,
              read: _refined_facts.ClassFacts, calls: List[_Step]
              ) -> List[_idiom.Hit]:
  """At the loop's read of each second stage's op, once."""
  ranges: List[Tuple[Set[str], Set[str]]] = [
      pair for method in info.methods.values()
      for pair in _chosen_stage._ranges(method.node)]
  if not ranges:
    return []
  phases = _refined_phases.Phases(info)
  ops = {id(step): _op_of(read, step) for step in calls}
  late = _late_lists(read, calls, ops, phases)
  group = [step for step in calls if step.var_list is not None
           and _loss_node(step.call) is not None]
  lists = {id(step): _outer(read, step, step.var_list) for step in group}
  # The ops, and the lists steps train: no op a hidden step is kept in.
  known = {name for name in list(ops.values()) + list(lists.values())
           if name is not None} | (late or set())
  if late is None or _refined_phases.hidden(analysis, info, phases, known):
    return []  # A step run from the bound on may train them all.
  picked = {name for pair in ranges for arm in pair for name in arm}
  # Only the steps whose ops a counter's test picks pair up, by list.
  chosen: Dict[str, List[_Step]] = {}
  for step in group:
    name = lists[id(step)]
    if name is not None and ops[id(step)] in picked:
      chosen.setdefault(name, []).append(step)
  named = set(lists.values()) - {None}
  later = _pairs(ranges, phases)
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
                                       ops, later, read.fed(scope, outputs)):
          at = phases.arms[1].get(ops[id(second)] or "")
          if at is not None and id(at[0]) not in found:
            labels: Dict[str, ast.AST] = {"filtered": at[0], REFINED: at[0]}
            before = phases.arms[0].get(ops[id(first)] or "")
            if before is not None:
              labels[FIRST] = before[0]
            found[id(at[0])] = _idiom.Hit(at[0], at[1], second.call, labels)
  return list(found.values())


def _pairs(ranges: List[Tuple[Set[str], Set[str]]],
           phases: _refined_phases.Phases) -> Dict[str, Set[str]]:
  """Op -> the ops a counter's test picks before its bound only where it
  picks this op from the bound on, each in one arm only, and which are
  read in before-arms only."""
  later: Dict[str, Set[str]] = {}
  for before, after in ranges:
    for mine in after - before:
      later.setdefault(mine, set()).update(
          (before - after) & phases.before_only - {mine})
  return later


def _refining(read: _refined_facts.ClassFacts, firsts: List[_Step],
              seconds: List[_Step], ops: Dict[int, Optional[str]],
              later: Dict[str, Set[str]], fed: Set[str]
              ) -> Iterator[Tuple[_Step, _Step]]:
  """The second stage's steps whose loss the sum of the two outputs
  feeds and whose op a counter's test picks from the bound on where it
  picks a first stage's before it, each with that first stage's step."""
  for second in seconds:
    loss = _outer(read, second, _loss_node(second.call))
    theirs = later.get(ops[id(second)] or "", set())
    if loss is not None and loss in fed and theirs:
      first = next((first for first in firsts if ops[id(first)] in theirs),
                   None)
      if first is not None:
        yield first, second


def _late_lists(read: _refined_facts.ClassFacts, calls: List[_Step],
                ops: Dict[int, Optional[str]],
                phases: _refined_phases.Phases) -> Optional[Set[str]]:
  """The lists, by name, that the class's steps that may run from the
  bound on train (every read of their op not in a before-arm); None
  when one of them may train every variable."""
  names: Set[str] = set()
  for step in calls:
    if ops[id(step)] not in phases.before_only:
      trained = _trained(read, step)
      if trained is None:
        return None
      names |= trained
  return names


def _trained(read: _refined_facts.ClassFacts, step: _Step
             ) -> Optional[Set[str]]:
  """The lists the step trains, read for its call site."""
  given = _given(read, step, step.var_list)
  if given is not None:
    return read.parts(given[1], given[0])
  return read.parts(step.scope, step.var_list)


def _given(read: _refined_facts.ClassFacts, step: _Step,
           node: Optional[ast.AST]
           ) -> Optional[Tuple[ast.expr, _scopes.Scope]]:
  """What the step's call site passes for `node`, a parameter."""
  if step.site is None or not isinstance(node, ast.Name) or (
      node.id not in step.scope.params):
    return None
  params = [p for p in step.scope.params if p != "self"]
  if node.id not in params:
    return None
  call, _, caller = read.unpacked[step.scope.name][step.site]
  return read.given(call, caller, params.index(node.id), node.id)


def _op_of(read: _refined_facts.ClassFacts, step: _Step) -> Optional[str]:
  """The `self.` attribute the step's op is kept in: assigned there, or
  returned by its method in a tuple that the call site unpacks into
  attributes (`self.g_optim1, ... = self._getOptimizer(...)`)."""
  node = read.kept(step.scope).get(id(step.call))
  if node is None:
    return None
  name = _names.dotted(node.targets[0])
  if name is not None and name.startswith("self."):
    return name
  if isinstance(node.targets[0], ast.Name) and step.site is not None:
    names = read.returned(step.scope)
    local = node.targets[0].id
    if names is None or names.count(local) != 1:
      return None
    target = read.unpacked[step.scope.name][step.site][1]
    if len(target.elts) == len(names):
      name = _names.dotted(target.elts[names.index(local)])
      if name is not None and name.startswith("self."):
        return name
  return None


def _outer(read: _refined_facts.ClassFacts, step: _Step,
           node: Optional[ast.AST]) -> Optional[str]:
  """`node` (the step's list or loss) as the method that builds the
  model names it: a parameter of the step's method as its call site
  gives it, else as written."""
  if node is None:
    return None
  if not isinstance(node, ast.Name) or node.id not in step.scope.params:
    return _names.dotted(node)
  given = _given(read, step, node)
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
