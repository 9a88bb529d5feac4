"""Whether a step over a whole scope is a later stage, not one of two
halves: its loss reads, through the forward graph of its function, an
upstream scope (one the kept scopes' layers are computed from) that
every step able to train it trains only in loops that end before the
first loop running this step, and whose own loss reads nothing this
step trains (tensor_holography: the main CNN trained in one loop, then
a `ddpm` net appended to its output trained alone in the next).

Read from one function's statements in order (`_stage_reach`: scope
paths, never below what carries no gradient, and none where a call
not known to pass one is met); the step's list must be
one filter alone, resolved against the paths it may match
(`_stage_lists`); the loops are phases only where their ops are read
in that function alone, never run again by a loop around a call of it
(`_stage_phases`). Silent where the read scope is trained in the
step's own loop or a later one (an online probe, a joint stage, a
function the later loop calls), where the other step's loss reads the
step's scopes (a GAN's mutual halves), where a read scope is only
downstream (a loss network, a discriminator), and where a step
elsewhere in the project may train it. Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional

from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _sequential
from tfpartial._tools.scan.idioms._sources._train_step import STEPS, Step
from tfpartial._tools.scan.idioms._wholes import _stage_lists
from tfpartial._tools.scan.idioms._wholes import _stage_phases
from tfpartial._tools.scan.idioms._wholes._stage_reach import (
    UNKNOWN, Reach, Reading, reach, reads)

# Searches bounded: a module's list of more steps than this is not
# ordered against a step (each step of it would order every other).
_STEPS = 24
# Kept paths of a step's list; None where it may train any scope.
Kept = Optional[FrozenSet[str]]


def _loss_reach(step: Step, names: Reach) -> Optional[FrozenSet[str]]:
  """The scopes a step's loss is computed from, None if not known."""
  text = step.loss or ""
  local = f"{id(step.scope)}:"  # A local name's loss, keyed by function.
  try:
    parsed = ast.parse(text[len(local):] if text.startswith(local) else (
        text), mode="eval")
  except SyntaxError:
    return None
  read = reads(parsed)
  if not read or not read <= set(names):
    return None  # A name not read, or read below a call not known.
  found = frozenset().union(*(names[n] for n in read))
  return None if UNKNOWN in found else found


def _upstream(kept: FrozenSet[str], under: Reach) -> FrozenSet[str]:
  """The scopes the kept scopes' own names are computed from."""
  return frozenset().union(*(under.get(k, frozenset()) for k in kept)
                           ) - kept


def later_stage(analysis: Analysis, step: Step, steps: List[Step]
                ) -> bool:
  """Whether the step is a later stage on scopes that earlier loops
  alone train (see the module)."""
  if len(steps) > _STEPS or step.var_list is None:
    return False
  found = _reading(analysis, step)
  kept = _kept(analysis, step, found)
  if not kept:
    return False
  read = _loss_reach(step, found.names)
  left = (read - kept) & _upstream(kept, found.under) if read else (
      frozenset())
  if not left or left & found.fixed:
    return False  # Nothing upstream read, or a part frozen whole.
  order = analysis.once("stage order", _sequential.Order)
  assert isinstance(order, _sequential.Order)
  earlier = 0
  for other in steps:
    if other is step or not _may_train(analysis, other, left, found) or (
        _never_run(analysis, other, order)):
      continue
    theirs = _loss_reach(other, found.names) if (
        other.scope is step.scope) else None
    if theirs is None or theirs & kept or not _sequential.before(
        (other.call, other.scope), (step.call, step.scope), order) or (
            not _stage_phases.alone(analysis, [
                order.kept((s.call, s.scope)) or "" for s in (
                    other, step)])):
      return False  # Unordered, or mutual halves, or run again.
    earlier += 1
  return earlier > 0 and not _trained_elsewhere(analysis, step)


def _never_run(analysis: Analysis, step: Step,
               order: _sequential.Order) -> bool:
  """Whether a step's op is kept in a name nothing reads, and not named
  (`name=`, which a lookup by name may fetch): it trains nothing."""
  return not any(k.arg == "name" for k in step.call.keywords) and (
      _stage_phases.never_run(analysis, order.kept(
          (step.call, step.scope))))


def _reading(analysis: Analysis, step: Step) -> Reading:
  """`reach` of the step's function, read once."""
  module = analysis.module(step.scope)
  helpers = frozenset(
      n.name for n in ast.walk(module.tree) if isinstance(
          n, (ast.FunctionDef, ast.AsyncFunctionDef))
  ) if module.tree is not None else frozenset()
  found = analysis.once(f"stage reach {id(step.scope)}",
                        lambda: reach(step.scope, helpers))
  assert isinstance(found, Reading)
  return found


def _may_train(analysis: Analysis, step: Step, paths: FrozenSet[str],
               found: Reading) -> bool:
  """Whether a step may train a scope of `paths`: it trains every
  variable, or a list not read as one filter, or one meeting them."""
  kept = _kept(analysis, step, found)
  return kept is None or bool(kept & paths)


def _kept(analysis: Analysis, step: Step, found: Reading) -> Kept:
  """The scope paths a step's list may keep, None if not read."""
  if step.var_list is None:
    return None
  module = analysis.module(step.scope)
  if module.tree is None:
    return None
  tree = module.tree
  index = analysis.once(f"stage index {id(tree)}",
                        lambda: _stage_lists.index(tree))
  assert isinstance(index, tuple)
  return _stage_lists.kept(step.var_list, step.labels.get("filtered"),
                           index, found.words)


def _trained_elsewhere(analysis: Analysis, step: Step) -> bool:
  """Whether another module of the project has a step: it may train the
  scopes read, in a run the scan cannot order against this one."""
  module = analysis.module(step.scope)
  others = analysis.once("stage others", lambda: [
      (analysis.module(place), call)
      for place, call in analysis.calls_named(STEPS)])
  assert isinstance(others, list)
  return any(home is not module for home, _ in others)
