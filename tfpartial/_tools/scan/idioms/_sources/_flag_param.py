"""A list of variables chosen by a flag its helper is given: a method
returns the variables it adds to a list, some of them only under a test
of one of its parameters (`if is_rules_only is False: variables +=
[self.entity_embeddings, self.predicate_embeddings]`), and the step's
caller passes that parameter a value that varies (`is_rules_only =
n_only_rules_epochs > epoch`): while the flag holds, the step leaves
those variables out. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow


def flagged(flow: Flow, value: Optional[ast.AST], scope: _scopes.Scope
            ) -> Optional[ast.expr]:
  """The variables the function that the call `value` (read in `scope`)
  runs adds to what it returns under a test of a parameter the call
  passes a value that is no literal, else None."""
  if not isinstance(value, ast.Call):
    return None
  home = flow.origin.get(id(value), scope)
  callee = flow.callee(value, home)
  found = flow.functions.get(id(callee)) if isinstance(
      callee, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
  inner = found[1].scope_of(found[0]) if found is not None else None
  if inner is None:
    return None
  for added, tested in _added_under_a_test(inner):
    if any(_passed(value, inner, name) for name in tested) and (
        "var" in flow.labels(added, inner)):
      flow.origin.setdefault(id(added), inner)
      return added
  return None


def _added_under_a_test(scope: _scopes.Scope
                        ) -> Iterator[tuple[ast.expr, List[str]]]:
  """(what is added, the parameters its `if` tests) for each addition
  to a list the function returns, made under an `if` (outside any loop)
  that tests its parameters alone (`is_rules_only is False`, `not
  train_all`)."""
  returned = [n.value.id for n in scope.nodes if isinstance(
      n, ast.Return) and isinstance(n.value, ast.Name)]
  for name in returned:
    for each in scope.defs.get(name, []):
      test = each.where.test
      if each.replaces or each.where.loops or test is None:
        continue
      tested = _parameters(test, scope)
      value = each.value  # `x += [a, b]` is held as `x + [a, b]`.
      if tested:
        yield value.right if isinstance(value, ast.BinOp) and isinstance(
            value.left, ast.Name) and value.left.id == name else value, tested


def _parameters(test: ast.expr, scope: _scopes.Scope) -> List[str]:
  """The parameters a test reads, when it reads nothing else (no call,
  no attribute, no other name)."""
  names = []
  for node in ast.walk(test):
    if isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
      return []
    if isinstance(node, ast.Name):
      if node.id not in scope.params or node.id in {"self", "cls"}:
        return []
      names.append(node.id)
  return names


def _passed(call: ast.Call, scope: _scopes.Scope, name: str) -> bool:
  """Whether `call` passes the parameter `name` a value that is no
  literal (a flag that varies)."""
  params = [p for p in scope.params if p not in {"self", "cls"}]
  given = [k.value for k in call.keywords if k.arg == name]
  if name in params and params.index(name) < len(call.args):
    given.append(call.args[params.index(name)])
  return any(not isinstance(g, (ast.Constant, ast.Starred)) for g in given)
