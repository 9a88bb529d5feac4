"""Two training functions that train the same lists: `train_step` and
`train_step_mixup` each take `tape.gradient(loss, self.update_vars)` and
apply it to `self.yamnet_vars` and `self.head_vars`, for a loss of their
own. They are one step written twice (another batch's loss, a mixup
variant), not two halves of a model each loss trains (an actor and a
critic train lists of their own): a list both leave out stays out.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, Iterable

from tfpartial._tools.scan.idioms._sources._train_step import Step


def twins(step: Step, other: Step, steps: Iterable[Step]) -> bool:
  """Whether `other`, in another function than `step`, is in one that
  trains exactly the lists `step`'s function trains."""
  if other.scope is step.scope:
    return False
  every = list(steps)
  return _lists(step, every) == _lists(other, every)


def _lists(step: Step, steps: Iterable[Step]) -> FrozenSet[str]:
  """The lists the steps of `step`'s function train, as text."""
  return frozenset(ast.unparse(o.var_list) for o in steps
                   if o.scope is step.scope and o.var_list is not None)
