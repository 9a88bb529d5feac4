"""A step that trains a hand-written list of variables on one loss of a
model function while another step of its function trains every variable
on another loss of the same call (`loss, loss_cs, w_cs = net(...)`;
`minimize(loss)`, then `minimize(loss_cs, var_list=[w_cs])`): a
fine-tune of the last layer alone. The list's loss reaches layers of the
model that the whole step trains (the shared tower both losses read)
and the list leaves them out, so they stay fixed while it runs. Said by
what the model function does: both losses, as it returns them, read a
trainable variable it makes that the list does not name; a loss that
reads only the listed variables (an auxiliary head's own loss) leaves
nothing out."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _graphs
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, _trainable_variable, var_list_of)

# The call a name is unpacked from, its tuple's width and the position.
_Made = Tuple[ast.expr, int, int]


def beside_sibling_loss(analysis: Analysis, chosen: ast.AST,
                        scope: _scopes.Scope, call: ast.Call) -> bool:
  """Whether `call` trains the hand-written list `chosen` (names unpacked
  from the call that returns its loss) on a loss that shares trainable
  variables with another loss of that call, which a step of `scope`
  minimises with no list in the same graph."""
  loss = call.args[0] if call.args else None
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not chosen.elts or (
      not isinstance(loss, ast.Name)):
    return False
  made = _unpacked(scope, loss.id)
  if made is None:
    return False
  value, width, place = made
  listed: Set[int] = set()
  for element in chosen.elts:
    found = _unpacked(scope, element.id) if isinstance(
        element, ast.Name) else None
    if found is None or found[0] is not value:
      return False
    listed.add(found[2])
  callee = analysis.flow.callee(value, scope) if isinstance(
      value, ast.Call) else None
  returned = _returned(callee, width)
  if callee is None or returned is None:
    return False
  key = (_graphs.section(scope, call), _names.call_name(call))
  return any(found[0] is value and found[2] != place and (
      found[2] not in listed) and _shares_left_out(
          callee, returned, place, found[2], listed)
             for name in _whole_steps(scope).get(key, ())
             for found in _all_unpacked(scope, name))


def _whole_steps(scope: _scopes.Scope) -> Dict[Tuple[int, str], List[str]]:
  """The losses (names) the steps of `scope` with no list minimise, by
  graph and step name; worked out once per function."""
  def find() -> Dict[Tuple[int, str], List[str]]:
    found: Dict[Tuple[int, str], List[str]] = {}
    for node in scope.nodes:
      if isinstance(node, ast.Call) and _names.call_name(node) in STEPS and (
          var_list_of(node) is None) and node.args and isinstance(
              node.args[0], ast.Name):
        found.setdefault((_graphs.section(scope, node), _names.call_name(
            node)), []).append(node.args[0].id)
    return found
  whole = scope.once((_whole_steps, 0, 0), find)
  assert isinstance(whole, dict)
  return whole


def _unpacked(scope: _scopes.Scope, name: str) -> Optional[_Made]:
  """(the call, its tuple's width, the position) a name is unpacked
  from when its function assigns it once, else None."""
  found = _all_unpacked(scope, name)
  defs = scope.defs.get(name, ())
  return found[0] if len(defs) == 1 and found else None


def _all_unpacked(scope: _scopes.Scope, name: str) -> List[_Made]:
  """Each (call, width, position) a name of `scope` is unpacked from."""
  return [(d.value, d.part[1], d.part[0]) for d in scope.defs.get(name, ())
          if d.part is not None and d.outer is None and isinstance(
              d.value, ast.Call) and _names.call_name(d.value) not in STEPS]


def _returned(callee: Optional[ast.AST], width: int
              ) -> Optional[List[ast.expr]]:
  """The elements of the one tuple of `width` the function returns."""
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  tuples = [n.value.elts for n in ast.walk(callee)
            if isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple)]
  return tuples[0] if len(tuples) == 1 and len(tuples[0]) == width else None


def _shares_left_out(callee: ast.AST, returned: List[ast.expr],
                     listed_loss: int, whole_loss: int, listed: Set[int]
                     ) -> bool:
  """Whether both losses the function returns read a trainable variable
  it makes that none of the `listed` returned variables is."""
  values: Dict[str, List[ast.expr]] = {}
  for node in ast.walk(callee):
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Name)):
      values.setdefault(node.targets[0].id, []).append(node.value)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
      values.setdefault(node.target.id, []).append(node.value)
  variables = {name for name, each in values.items()
               if any(_trainable_variable(v) for v in each)}
  kept = {e.id for at, e in enumerate(returned)
          if at in listed and isinstance(e, ast.Name)}
  if len(kept) != len(listed):
    return False
  reach = [_reached(returned[at], values) for at in (listed_loss, whole_loss)]
  return bool((reach[0] & reach[1] & variables) - kept)


def _reached(node: ast.expr, values: Dict[str, List[ast.expr]]) -> Set[str]:
  """Every name `node` reads, through the function's assignments."""
  seen: Set[str] = set()
  todo = [node]
  while todo:
    for each in ast.walk(todo.pop()):
      if isinstance(each, ast.Name) and each.id not in seen:
        seen.add(each.id)
        todo.extend(values.get(each.id, ()))
  return seen
