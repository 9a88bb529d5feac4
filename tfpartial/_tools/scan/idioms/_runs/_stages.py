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
from typing import Dict, List, Tuple

from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan.idioms._runs import _downstream
from tfpartial._tools.scan.idioms._runs import _forward
from tfpartial._tools.scan.idioms._runs import _inversion
from tfpartial._tools.scan.idioms._runs import _real_side
from tfpartial._tools.scan.idioms._runs import _stage_calls
from tfpartial._tools.scan.idioms._runs import _unpacked
from tfpartial._tools.scan.idioms._runs._stage_apart import (
    Home, apart, trained_with)
from tfpartial._tools.scan.idioms._runs._stage_marks import (
    Group, Opened, chosen_at, computed_from, definitions, home_of, inputs_of,
    marks_of, position, runs_group)
from tfpartial._tools.scan.idioms._runs._stage_marks import (
    Training as Training)  # What `_left_out` builds its steps as.

def left_behind(flow: Flow, trainings: List[Training]
                ) -> List[Tuple[Training, ast.expr]]:
  """The trainings (one per run and group left out, the first) whose run
  leaves out the variables of an earlier stage that feed what they
  train, with where each chooses its variables."""
  by_home: Dict[int, List[Training]] = {}
  nodes: Dict[int, ast.AST] = {}
  for each in trainings:
    node = home_of(each.scope)
    nodes[id(node)] = node
    by_home.setdefault(id(node), []).append(each)
  found: Dict[Tuple[int, ...], Tuple[Training, ast.expr]] = {}
  opened = Opened(flow)
  unpacked = _unpacked.Unpacked(flow)
  groups = [(nodes[key], group) for key, group in by_home.items()] + (
      _chosen_stage.module_functions([(t.scope, t) for t in trainings]))
  for node, group in groups:
    home = Home.of(node, group) if len(group) > 1 else None
    if home is not None:  # Else no mode is tested, no op fetched apart.
      home.together = opened.together
      _runs_apart(home, group, opened, found, unpacked)
  return list(found.values())


def _runs_apart(home: Home, group: List[Training], opened: Opened,
                found: Dict[Tuple[int, ...], Tuple[Training, ast.expr]],
                unpacked: _unpacked.Unpacked) -> None:
  """Adds to `found` the steps of one home leaving an earlier stage out,
  keyed by the home and the steps of that stage."""
  defs = definitions(home.node)
  # What a step's network is fed: each name a data helper's tuple gives
  # from its own element's arguments, not all of them (`_unpacked`).
  fed_defs = unpacked.narrowed(defs, home.node, group[0].scope)
  marks = [marks_of(t, defs) for t in group]
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
          marks[i]) or not apart(step, other, home) or trained_with(
              step, meeting(j), home):
        continue
      if i not in fed:
        fed[i] = inputs_of(step, marks[i], fed_defs, opened)
      if any(runs_group(n, marks[j], opened, step.scope) for n in fed[i]) or (
          _chosen_stage.built_on(opened.flow.project, marks[i].scopes,
                                 marks[j].scopes, opened.built,
                                 _chosen_stage.near_functions(step.scope))
      ) or _feeds_between(step, marks[i], marks[j], defs, opened) or (
          _forward.through(opened.flow.project, computed_from(
              [step.loss], defs, _stage_calls.own_of(step.scope)),
                           marks[i].scopes, marks[j].scopes,
                           _chosen_stage.near_functions(step.scope),
                           opened.forward)):
        behind.append(id(other.call))
    if behind and _fed_real(step, group, home, opened):
      continue  # A discriminator's real side: data, no earlier stage.
    if behind and _inversion.inverts(step.loss, lambda call: runs_group(
        call, marks[i], opened, step.scope), fed.get(i) or inputs_of(
            step, marks[i], fed_defs, opened), defs):
      continue  # The earlier stage only makes the later one's pairs.
    run = (id(home.node), *sorted(behind))
    if behind and (run not in found or position(step.call) < position(
        found[run][0].call)):
      found[run] = (step, chosen_at(step.var_list, step.call, defs))


def _fed_real(step: Training, group: List[Training], home: Home,
              opened: Opened) -> bool:
  """Whether the step's network is a discriminator given its real side
  by a network no step of its run trains (`_real_side`)."""
  partners = [o.var_list for o in group if o is not step and (
      o.scope is step.scope) and not apart(step, o, home)]
  return _real_side.fed_real(opened.flow, step.scope, step.call, step.loss,
                             step.var_list, partners)


def _feeds_between(step: Training, mine: Group, other: Group,
                   defs: Dict[str, List[Tuple[ast.expr, int]]],
                   opened: Opened) -> bool:
  """Whether the step's loss runs the other group on what the step's
  own scopes made (`_downstream`)."""
  near = _chosen_stage.near_functions(step.scope)
  made = _downstream.made_in(near, mine.scopes)
  if not made:
    return False
  own = _stage_calls.own_of(step.scope)

  def runs_other(call: ast.Call) -> bool:
    callee = opened.flow.callee(call, step.scope)
    return runs_group(call, other, opened, step.scope) or (
        callee is not None and _downstream.opens(callee, other.scopes))
  return _downstream.between(computed_from([step.loss], defs, own),
                             runs_other,
                             lambda given: computed_from(given, defs, own),
                             made)
