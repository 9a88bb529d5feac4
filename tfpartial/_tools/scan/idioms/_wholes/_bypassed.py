"""Whether the network a filter leaves out is bypassed wherever its step
runs: the step's op is fetched only under a flag (`elif
params["bypass_net"]: sess.run(train_main_op)`), and the function that
builds the left-out scope rebinds, under the same flag, every output the
scope's block made (`with tf.variable_scope("ddpm"): out = net(x)` then
`if params["bypass_net"]: out = x`). In that run the left-out network
feeds nothing the step's loss reads: the list leaves out nothing it
could train. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

# Searches bounded: at most this many modules are read for the scope.
_MODULES = 40


def bypassed(project: _project.Project, node: ast.AST, call: ast.Call,
             scope: _scopes.Scope) -> bool:
  """Whether the filter `node` of the step `call` leaves out one literal
  scope whose network a flag bypasses, and the step runs only under
  that flag."""
  left = _left_out(node)
  if left is None:
    return False
  flags = _run_under(call, scope)
  if not flags:
    return False
  for module in project.modules[:_MODULES]:
    text = module.source.text
    if f'"{left}"' not in text and f"'{left}'" not in text or (
        project.parsed(module) is None):
      continue
    tree = module.tree
    if tree is None:
      continue
    for function in ast.walk(tree):
      if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
          _rebinds(function.body, left, flags)):
        return True
  return False


def _left_out(node: ast.AST) -> Optional[str]:
  """`S` of `[v for v in vs if not v.name.startswith('S')]` or of
  `'S' not in v.name`: the one scope the filter drops."""
  if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(
      node.generators) != 1 or len(node.generators[0].ifs) != 1:
    return None
  test = node.generators[0].ifs[0]
  if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and (
      isinstance(test.operand, ast.Call)) and _names.call_name(
          test.operand) == "startswith" and len(test.operand.args) == 1:
    literal = test.operand.args[0]
  elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.NotIn):
    literal = test.left
  else:
    return None
  if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
    return literal.value.strip("/") or None
  return None


def _run_under(call: ast.Call, scope: _scopes.Scope) -> Set[str]:
  """The flags (as written) that hold wherever the function fetches the
  op `call` makes: the plain conditions of the `if` arms around every
  read of the name it is kept in."""
  kept = _kept_in(call, scope.node)
  if kept is None:
    return set()
  reads = [n for n in ast.walk(scope.node) if isinstance(
      n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) and (
          _names.dotted(n) == kept)]
  if not reads:
    return set()
  found: Optional[Set[str]] = None
  for read in reads:
    held = _held_at(scope.node, read)
    found = held if found is None else found & held
  return found or set()


def _kept_in(call: ast.Call, function: ast.AST) -> Optional[str]:
  for node in ast.walk(function):
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
      value = node.value
      made = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [
          value]
      if any(m is call for m in made):
        return _names.dotted(node.targets[0])
  return None


def _held_at(function: ast.AST, read: ast.AST) -> Set[str]:
  """The plain conditions of the `if` bodies around `read`."""
  held: Set[str] = set()
  for node in ast.walk(function):
    if isinstance(node, ast.If) and any(
        read is n for s in node.body for n in ast.walk(s)):
      parts = node.test.values if isinstance(node.test, ast.BoolOp) and (
          isinstance(node.test.op, ast.And)) else [node.test]
      held.update(ast.unparse(p) for p in parts
                  if isinstance(p, (ast.Name, ast.Attribute, ast.Subscript)))
  return held


def _rebinds(body: List[ast.stmt], left: str, flags: Set[str]) -> bool:
  """Whether `body` opens the scope `left`, then under one of `flags`
  rebinds every name the scope's block bound that is read later."""
  for index, statement in enumerate(body):
    if not (isinstance(statement, ast.With) and any(
        _scope_literal(i.context_expr) == left for i in statement.items)):
      continue
    made = {name for s in ast.walk(statement) if isinstance(s, ast.Assign)
            for target in s.targets for name in _bound(target)}
    for number, later in enumerate(body[index + 1:], index + 1):
      assigns = [s for s in getattr(later, "body", []) if isinstance(
          s, ast.Assign)]
      if isinstance(later, ast.If) and ast.unparse(later.test) in flags and (
          len(assigns) == len(later.body)):
        rebound = {name for s in assigns for target in s.targets
                   for name in _bound(target)}
        after = body[number + 1:]
        read = {n.id for s in after for n in ast.walk(s)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if rebound and made & read and made & read <= rebound:
          return True
  return False


def _bound(target: ast.expr) -> Set[str]:
  """The plain names an assignment's target binds (`a, b = ...`)."""
  if isinstance(target, ast.Name):
    return {target.id}
  if isinstance(target, (ast.Tuple, ast.List)):
    return {n for e in target.elts for n in _bound(e)}
  return set()


def _scope_literal(expr: ast.expr) -> Optional[str]:
  if isinstance(expr, ast.Call) and _names.call_name(
      expr) in _names.TF_SCOPES and expr.args and isinstance(
          expr.args[0], ast.Constant) and isinstance(expr.args[0].value, str):
    return expr.args[0].value.strip("/")
  return None
