"""Hand-made lists that name a part of a model, one question for
`_hand_made`: pairs written out in one arm that are some of the other
arm's (`_fewer_pairs`), the newest layer of a stack trained first
(`_newest_first`), variables looked up by name (`_looked_up`), a list cut
where a name test matches (`_sliced_at_name`); and where two lists the
flow does not see chosen are chosen: gathered under options
(`_flag_gathered`), filled under a name test (`_filled_by_name`)."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._sources import _fewer_pairs
from tfpartial._tools.scan.idioms._sources import _filled_by_name
from tfpartial._tools.scan.idioms._sources import _flag_gathered
from tfpartial._tools.scan.idioms._sources import _keyed
from tfpartial._tools.scan.idioms._sources import _looked_up
from tfpartial._tools.scan.idioms._sources import _newest_first
from tfpartial._tools.scan.idioms._sources import _sliced_at_name
from tfpartial._tools.scan.idioms._sources._train_step import Step


def picked(chosen: ast.AST, scope: _scopes.Scope, call: ast.Call) -> bool:
  """Whether the list `chosen` of the step `call` is one of these hand-
  made parts."""
  return _fewer_pairs.fewer_pairs(chosen, scope, call) or (
      _newest_first.newest_first(chosen, scope, call)) or (
          _looked_up.by_name(chosen, scope) or _sliced_at_name.sliced(
              chosen, scope)) is not None


def chosen_at(chosen: ast.AST, scope: _scopes.Scope, flow: Flow
              ) -> Optional[ast.expr]:
  """Where a list the flow does not see chosen is chosen: the keys of
  `_keyed` (or the first entry of its merged subset), the empty list a
  list gathered under options starts from, or the name test that fills
  a `self.` list in another method (its origin recorded)."""
  found = _keyed.chosen_keys(chosen, scope) or _flag_gathered.gathered(
      chosen, scope) or _keyed.merged_subset(chosen, scope)
  if found is not None:
    return found
  test = _filled_by_name.filled(chosen, scope)
  if test is None:
    return None
  flow.origin.setdefault(id(test[0]), test[1])
  return test[0]


def placed(step: Step) -> Optional[ast.expr]:
  """Where a finding of these lists is reported, if the step's list is
  one: the gathered list, the newest layer's list, the name test."""
  test = _filled_by_name.filled(step.var_list, step.scope)
  return _flag_gathered.gathered(step.var_list, step.scope) or (
      _newest_first.placed(step)) or (test[0] if test else None)


def own_steps(step: Step, steps: List[Step]) -> List[Step]:
  """The steps `step`'s gates weigh: without the gradients a gathered
  list adds (parts of its training), and only its function's own when it
  trains the newest layer of a stack first."""
  return _newest_first.own_steps(step, _flag_gathered.without_parts(
      step, steps))
