"""Whether a split into halves leaves out a part before splitting: a
captioner trained adversarially takes the trainable variables less its
pretrained encoder (`vars_all = [v for v in tf.trainable_variables() if
v not in model.inception_variables]`) and splits only that list into the
generator and the discriminator (`d_vars = [v for v in vars_all if
'discr' in v.name]`, `g_vars = [... 'discr' not in v.name]`)
(Youngjung/im2txt). Between them the halves train everything but the
encoder: the cut, not the split, is the choice to leave it fixed. Not a
cut whose list another step of the module trains. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step


def cut_before(step: Step, others: List[Step]) -> bool:
  """Whether the step's list and the lists of `others` (the other half's
  steps) are each one comprehension over one list of the step's function,
  and that list is a comprehension leaving out the members of a list
  (`v not in L`) that none of the steps of `others`, nor the step,
  trains."""
  source = _drawn_from(step.var_list, step.scope)
  if source is None or not others or any(
      other.scope is not step.scope or _drawn_from(
          other.var_list, other.scope) != source for other in others):
    return False
  values = [d.value for d in step.scope.defs.get(source, ())]
  if len(values) != 1:
    return False
  left_out = _left_out(values[0])
  trained = {ast.unparse(s.var_list) for s in [step, *others]
             if s.var_list is not None}
  return bool(left_out) and not left_out & trained


def _drawn_from(listed: Optional[ast.AST], scope: _scopes.Scope
                ) -> Optional[str]:
  """The local list that the one assignment of the name `listed` draws
  its items from (`[v for v in vars_all if ...]`: `vars_all`)."""
  if not isinstance(listed, ast.Name):
    return None
  values = [d.value for d in scope.defs.get(listed.id, ())]
  if len(values) != 1 or not isinstance(values[0], ast.ListComp) or len(
      values[0].generators) != 1:
    return None
  source = values[0].generators[0].iter
  return source.id if isinstance(source, ast.Name) and (
      source.id in scope.defs) else None


def _left_out(value: ast.AST) -> Set[str]:
  """The lists a comprehension over the trainable variables leaves out
  by membership (`if v not in model.inception_variables`), as text."""
  if not isinstance(value, ast.ListComp) or len(value.generators) != 1:
    return set()
  item = value.generators[0].target
  return {ast.unparse(test.comparators[0])
          for condition in value.generators[0].ifs
          for test in _scopes.walk(condition)
          if isinstance(test, ast.Compare) and len(test.ops) == 1 and (
              isinstance(test.ops[0], ast.NotIn)) and isinstance(
                  item, ast.Name) and isinstance(test.left, ast.Name) and (
                      test.left.id == item.id) and isinstance(
                          test.comparators[0], (ast.Name, ast.Attribute))}
