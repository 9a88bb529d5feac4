"""Two training functions that train the same lists: `train_step` and
`train_step_mixup` each take `tape.gradient(loss, self.update_vars)` and
apply it to `self.yamnet_vars` and `self.head_vars`, for a loss of their
own. They are one step written twice (another batch's loss, a mixup
variant), not two halves of a model each loss trains (an actor and a
critic train lists of their own): a list both leave out stays out.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, Set

from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes import _rebound


def twins(step: Step, other: Step, lists: Dict[int, FrozenSet[str]]) -> bool:
  """Whether `other`, in another function than `step`, is in one that
  trains exactly the lists `step`'s function trains (`lists`: each
  function's, by `lists_of` the steps weighed)."""
  if other.scope is step.scope:
    return False
  return lists.get(id(step.scope), frozenset()) == lists.get(
      id(other.scope), frozenset())


def lists_of(steps: Iterable[Step]) -> Dict[int, FrozenSet[str]]:
  """The lists the steps of each function train, as text, by the id of
  its scope: read once for every pair of steps weighed."""
  found: Dict[int, Set[str]] = {}
  for each in steps:
    found.setdefault(id(each.scope), set())
    if each.var_list is not None:
      found[id(each.scope)].add(_text(each))
  return {scope: frozenset(texts) for scope, texts in found.items()}


def _text(step: Step) -> str:
  """A step's list as written, a local alias of its object as what it
  holds (`_rebound.aliased`: `model.tvars` of `model = self.generator`),
  unparsed once per step."""
  if _text not in step.memo:
    step.memo[_text] = _rebound.aliased(step.var_list, step.scope) if (
        step.var_list is not None) else "None"
  return str(step.memo[_text])
