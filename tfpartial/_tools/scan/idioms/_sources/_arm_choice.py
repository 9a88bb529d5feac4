"""Where a flag chooses among joins of filtered groups the list a step
trains (`if FLAGS.mode == "depthflow": train = pose + depth + flow`,
`elif FLAGS.mode == "depth": train = pose + depth`, ...), or between two
steps of one loss (`if fix_coarse: minimize(loss, var_list=new)`, `else:
minimize(loss, var_list=new + old)`, or the two side by side, a run
choosing which op it fetches: `self.train_finetune` over `self.encoder_vars
+ self.classifier_vars` beside `self.train_fixed` over
`self.classifier_vars`): the choice is the first arm, or the narrower
step, that leaves a group out, not the filter of a group, which every arm
may read. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _arms
from tfpartial._tools.scan.idioms._sources import _flagged


def chosen_arm(var_list: Optional[ast.AST], scope: _scopes.Scope,
               node: ast.expr) -> Optional[ast.expr]:
  """The value of the first arm of a flag's `if` that assigns `var_list`
  fewer of the groups the arms join than another arm does, when the
  filter `node` makes one of those groups; else None."""
  if not isinstance(var_list, ast.Name):
    return None
  arms = [d for d in scope.defs.get(var_list.id, []) if d.replaces]
  if len(arms) < 2 or not all(
      _flagged.a_flag(d.where.test, var_list.id) for d in arms):
    return None
  groups = [_joined(d.value) for d in arms]
  if any(g is None for g in groups) or not any(
      _made_by(scope, name, node) for g in groups for name in g or ()):
    return None
  every = set().union(*(g for g in groups if g is not None))
  for arm, joined in zip(arms, groups):
    if joined is not None and joined < every and any(
        joined < (other or set()) for other in groups):
      return arm.value
  return None


def chosen_step(call: ast.AST, var_list: Optional[ast.AST],
                scope: _scopes.Scope,
                others: List[Tuple[ast.AST, Optional[ast.AST]]],
                node: ast.expr) -> Optional[ast.expr]:
  """The narrower step when an `if` builds the step `call` in one arm and
  a step of the same loss (one of `others`, each a call and its list) in
  the other, or the function builds both side by side (in no two arms of
  one `if`), one over fewer of the groups the other joins, and the filter
  `node` makes one of the groups `call` trains; else None. Both steps are
  then shown at that one place."""
  mine = _groups(var_list, scope, call)
  if not mine or not any(_made_by(scope, name, node) for name in mine):
    return None
  for other, other_list in others:
    theirs = _groups(other_list, scope, other)
    if not theirs or not (mine < theirs or theirs < mine) or not (
        _exclusive_or_beside(call, other, scope)):
      continue
    shown = call if mine < theirs else other
    return shown if isinstance(shown, ast.expr) else None
  return None


def _exclusive_or_beside(call: ast.AST, other: ast.AST,
                         scope: _scopes.Scope) -> bool:
  """Whether the steps `call` and `other` are built in the two arms of
  one `if`, or both in the same arms (side by side)."""
  mine, theirs = _arms.arm(call, scope, [other]), _arms.arm(
      other, scope, [call])
  return _arms.exclusive(mine, theirs) or mine is theirs is None


def _groups(value: Optional[ast.AST], scope: _scopes.Scope, call: ast.AST
            ) -> Optional[Set[str]]:
  """The names the list of the step `call` joins, through a name last
  bound to a join before the step (`variables = new + old`); None for a
  list of another form."""
  if isinstance(value, ast.Name):
    at = (getattr(call, "lineno", 0), getattr(call, "col_offset", 0))
    bound = [d for d in scope.defs.get(value.id, [])
             if d.replaces and d.end <= at]
    if bound and isinstance(bound[-1].value, ast.BinOp) and all(
        d.replaces for d in scope.defs.get(value.id, [])):
      return _joined(bound[-1].value)
  attribute = _own_attribute(value, scope)
  if isinstance(attribute, ast.BinOp):
    return _joined(attribute)
  return _joined(value) if isinstance(value, ast.expr) else None


def _own_attribute(value: Optional[ast.AST], scope: _scopes.Scope
                   ) -> Optional[ast.expr]:
  """The one value the class of the method `scope` binds to `self.x`
  when `value` is `self.x` bound in this method alone; else None."""
  name = _names.dotted(value) if isinstance(value, ast.Attribute) else None
  if name is None or not name.startswith("self.") or scope.cls is None:
    return None
  bound = scope.cls.attributes.get(name, [])
  return bound[0][0] if len(bound) == 1 and bound[0][1] is scope else None


def _joined(value: ast.expr) -> Optional[Set[str]]:
  """The names `a + b + c` joins (a name alone is one, `self.a` too),
  else None."""
  if isinstance(value, ast.Name):
    return {value.id}
  if isinstance(value, ast.Attribute) and isinstance(
      value.value, ast.Name) and value.value.id == "self":
    return {f"self.{value.attr}"}
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    left, right = _joined(value.left), _joined(value.right)
    return None if left is None or right is None else left | right
  return None


def _made_by(scope: _scopes.Scope, name: str, node: ast.expr) -> bool:
  """Whether `node` lies in a value the scope assigns to `name` (to
  `self.x` in a method, too)."""
  values: List[ast.expr] = [d.value for d in scope.defs.get(name, [])]
  if name.startswith("self.") and scope.cls is not None:
    values += [value for value, home in scope.cls.attributes.get(name, [])
               if home is scope]
  return any(node is each for value in values for each in ast.walk(value))
