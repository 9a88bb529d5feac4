"""A half of a pair of trainings narrowed again by name (`varsGP = [v for v
in tvars if 'geometric' in v.name]` beside a discriminator's `varsD`,
then `cur = [v for v in varsGP if 'geometric/warp3' in v.name]` trained
for the generator's loss): the other half trains its own variables, not
the rest of this half, so the pair leaves that rest out. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._sources._train_step import Step


def narrowed(flow: Flow, step: Step, steps: List[Step]) -> bool:
  """Whether the step's filter keeps by name some of a list that is
  itself a filter, which no step trains whole, and no other step's list
  reads that list or the step's own (a complement of either)."""
  chosen = step.labels.get("filtered")
  parent = _parent(chosen)
  if parent is None or not isinstance(chosen, ast.expr):
    return False
  home = flow.origin.get(id(chosen), step.scope)
  if "filtered" not in flow.labels(parent, home):
    return False
  read = {ast.unparse(parent), *_targets(chosen, home)}
  return not any(other is not step and read & _read(other) for other in steps)


def _read(step: Step) -> Set[str]:
  """The names and attributes the step's list and its filter read."""
  return {ast.unparse(n) for top in (step.var_list, step.labels.get(
      "filtered")) if isinstance(top, ast.AST) for n in ast.walk(top)
          if isinstance(n, (ast.Name, ast.Attribute))}


def _parent(chosen: object) -> Optional[ast.expr]:
  """The list a one-loop comprehension keeps some of by a name test that
  keeps (`'x' in v.name`, `v.name.startswith(p)`), none negated."""
  if not isinstance(chosen, (ast.ListComp, ast.GeneratorExp)) or len(
      chosen.generators) != 1:
    return None
  loop = chosen.generators[0]
  if not loop.ifs or not all(_keeps(test) for test in loop.ifs) or (
      not isinstance(loop.iter, (ast.Name, ast.Attribute))):
    return None
  return loop.iter


def _keeps(test: ast.expr) -> bool:
  """A name test with no `not` and no `not in`."""
  return _names.mentions_a_name_test(test) and not any(
      isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) or isinstance(
          n, ast.Compare) and any(isinstance(op, (ast.NotIn, ast.IsNot))
                                  for op in n.ops) for n in ast.walk(test))


def _targets(chosen: ast.expr, home: _scopes.Scope) -> List[str]:
  """The names the scope assigns `chosen` to."""
  return [name for name, each in home.defs.items()
          if any(d.value is chosen for d in each)]
