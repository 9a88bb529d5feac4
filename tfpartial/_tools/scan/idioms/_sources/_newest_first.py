"""Stage-wise training of a stack, newest layer first: in a loop over
the layers, a step trains only the list of the layer just added, the
list is then added to the layers trained so far, and a second step of
the same loss trains them all (`var_list = [v for v in vars_in_layer[t]
if v not in train_vars]`, `minimize(loss_, var_list=var_list)`, `for v
in var_list: train_vars.append(v)`, `minimize(loss_, train_vars)`). In
the first stage of each layer the earlier layers run in the loss and
stay fixed. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _train_step


def newest_first(chosen: ast.AST, scope: _scopes.Scope,
                 call: ast.Call) -> bool:
  """Whether the list `chosen` of the step `call` is added, in the loop
  that builds the step, to a list that another call of the same loss
  trains there."""
  loss = call.args[0] if call.args else None
  if not isinstance(chosen, ast.Name) or not isinstance(loss, ast.Name):
    return False
  for loop in _loops_around(scope, call):
    for gathered in _gathered_into(loop, chosen.id):
      if any(other is not call and _reads(other, loss.id) and _reads(
          other, gathered) for other in _calls(loop)):
        return True
  return False


def own_steps(step: _train_step.Step, steps: List[_train_step.Step]
              ) -> List[_train_step.Step]:
  """`steps` without those of other functions when `step` trains the
  newest layer first: its stages are its function's own, not halves of a
  pair with another function's losses."""
  if step.var_list is None or not newest_first(step.var_list, step.scope,
                                               step.call):
    return steps
  return [other for other in steps if other.scope is step.scope]


def placed(step: _train_step.Step) -> Optional[ast.expr]:
  """Where a newest-first list is made (its one assignment in the loop),
  or None for any other step: the finding's place."""
  chosen = step.var_list
  if not isinstance(chosen, ast.Name) or not newest_first(
      chosen, step.scope, step.call):
    return None
  defs = step.scope.defs.get(chosen.id, [])
  return defs[0].value if len(defs) == 1 else None


def _loops_around(scope: _scopes.Scope, call: ast.Call) -> List[ast.For]:
  """The `for` loops of the scope's function around `call`, outermost
  first; found for every call at once (each step asks twice)."""
  found = scope.once((_loops_around, 0, 0),
                     lambda: _loops_by_call(scope.node))
  return found.get(id(call), [])


def _loops_by_call(node: ast.AST) -> Dict[int, List[ast.For]]:
  found: Dict[int, List[ast.For]] = {}
  for each in _scopes.walk(node):
    if isinstance(each, ast.For):
      for inner in _scopes.walk(each):
        if isinstance(inner, ast.Call):
          found.setdefault(id(inner), []).append(each)
  return found


def _gathered_into(loop: ast.For, name: str) -> Iterator[str]:
  """The lists the loop adds the items of `name` to (`for v in name:
  kept.append(v)`, `kept += name`, `kept.extend(name)`)."""
  for node in _scopes.walk(loop):
    if isinstance(node, ast.AugAssign) and isinstance(
        node.target, ast.Name) and _is_name(node.value, name):
      yield node.target.id
    if isinstance(node, ast.Call) and _names.call_name(node) == "extend" \
        and node.args and _is_name(node.args[0], name):
      yield _receiver(node) or ""
    if isinstance(node, ast.For) and _is_name(node.iter, name) and (
        isinstance(node.target, ast.Name)):
      for inner in _scopes.walk(node):
        if isinstance(inner, ast.Call) and _names.call_name(
            inner) == "append" and inner.args and _is_name(
                inner.args[0], node.target.id):
          yield _receiver(inner) or ""


def _receiver(call: ast.Call) -> Optional[str]:
  func = call.func
  return func.value.id if isinstance(func, ast.Attribute) and isinstance(
      func.value, ast.Name) else None


def _is_name(node: ast.AST, name: str) -> bool:
  return isinstance(node, ast.Name) and node.id == name


def _calls(loop: ast.For) -> Iterator[ast.Call]:
  return (n for n in _scopes.walk(loop) if isinstance(n, ast.Call))


def _reads(call: ast.Call, name: str) -> bool:
  """Whether `call` takes the name `name` as an argument."""
  return bool(name) and any(_is_name(a, name) for a in list(call.args) + [
      k.value for k in call.keywords])
