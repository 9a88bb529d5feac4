"""A flag of a step's function that narrows what it trains: `if
transfer:` the list is the variables under sub-scopes of the network
(`name + "/q_func/action_value/transfer"`), `else` the network's whole
scope (`name + "/q_func"`), and a caller of the function passes the flag
on (`build_train(..., transfer=self.transfer)`): while it is set, the
step leaves the rest of the network out. A DQN that copies its trained
network into a target one is no finding by itself; this choice is.
Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _arms


def narrowed(analysis: Analysis, chosen: Optional[ast.AST],
             scope: _scopes.Scope) -> Optional[ast.expr]:
  """The narrower arm's list, when `chosen` is a name a parameter's `if`
  assigns in both arms, one arm's scopes each inside the other arm's one
  scope, and some call of the function passes that parameter a value
  other than a false literal; else None."""
  if not isinstance(chosen, ast.Name):
    return None
  defs = scope.defs.get(chosen.id, [])
  if len(defs) != 2 or not all(d.replaces for d in defs):
    return None
  test = defs[0].where.test
  if not (isinstance(test, ast.Name) and test is defs[1].where.test
          and test.id in scope.params and _arms.apart(
              scope, defs[0].start, defs[1].start)):
    return None
  one, other = (_scoped(d.value) for d in defs)
  for narrow, whole, value in ((one, other, defs[0].value),
                               (other, one, defs[1].value)):
    if len(whole) == 1 and narrow and all(
        prefix == whole[0][0] and name.startswith(
            whole[0][1].rstrip("/") + "/") for prefix, name in narrow) and (
                _set_by_a_caller(analysis, scope, test.id)):
      return value
  return None


def _scoped(value: ast.expr) -> List[Tuple[str, str]]:
  """(the prefix, as text, and the literal tail) of the scope of each
  variable list `value` joins with `+`; [] when anything else is joined."""
  parts: List[Tuple[str, str]] = []
  stack = [value]
  while stack:
    node = stack.pop()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
      stack += [node.right, node.left]
      continue
    chosen = _names.scope_argument(node) if isinstance(
        node, ast.Call) and _names.call_name(node) in (
            _names.VARIABLE_LISTS) else None
    if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str):
      parts.append(("", chosen.value))
    elif isinstance(chosen, ast.BinOp) and isinstance(
        chosen.op, ast.Add) and isinstance(
            chosen.right, ast.Constant) and isinstance(
                chosen.right.value, str):
      parts.append((ast.unparse(chosen.left), chosen.right.value))
    else:
      return []
  return parts


def _set_by_a_caller(analysis: Analysis, scope: _scopes.Scope,
                     flag: str) -> bool:
  """Whether a call of `scope`'s function in the project passes `flag`
  by keyword a value that is not a false literal."""
  name = getattr(scope.node, "name", "")
  if not name:
    return False
  project = analysis.project
  for _, call in project.calls_named(
      {name}, project.all_modules_with({name})):
    for keyword in call.keywords:
      if keyword.arg == flag and not (isinstance(
          keyword.value, ast.Constant) and not keyword.value.value):
        return True
  return False
