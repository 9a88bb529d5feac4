"""Whether the scopes a filter keeps cover the model: the filter keeps
the scopes a helper is handed (`for scope in scopes:
get_collection(..., scope)`), and the literal scopes its callers hand
it (`train_scopes = ['encoder', 'decoder']`, or a function that grows
the list under flags) hold every root scope the training script's
modules open around trainable variables (those it imports, at any
depth; a scope holding only `trainable=False` copies, a moving
average's, is no part of the model). The union of the lists is the
whole model, not a part of it.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

_MAKERS = {"Variable", "get_variable"}
_DEPTH = 3  # Callers followed up from the helper.
_COLLECTS = {"get_collection", "get_model_variables", "get_variables",
             "trainable_variables", "global_variables"}


def covers_roots(project: _project.Project, node: ast.AST,
                 home: _scopes.Scope) -> bool:
  """Whether `node`, filtering by a scope from a parameter of its
  function, is handed by every caller a list of literal scopes that
  covers the root scopes of the caller's modules."""
  param = _param_of(node, home)
  handed = _handed(project, home, param, _DEPTH) if param else (
      _at_call(project, node, home))
  return bool(handed) and all(
      listed and roots and roots <= listed for listed, roots in (
          (listed, _roots(project, module)) for listed, module in handed))


def _at_call(project: _project.Project, node: ast.AST, home: _scopes.Scope
             ) -> List[Tuple[Set[str], _project.Module]]:
  """The literal scopes handed at `node`, a call of a project function
  that collects each scope of a parameter (`get_trainable_variables(
  ['encoder', 'decoder'])`)."""
  name = _names.dotted(node.func) if isinstance(node, ast.Call) else None
  target = project.resolve(home, name) if name else None
  if not isinstance(node, ast.Call) or not isinstance(target, tuple) or (
      not isinstance(target[0], (ast.FunctionDef, ast.AsyncFunctionDef))):
    return []
  function = target[0]
  inner = target[1].scope_of(function)
  collected = [_param_of(n, inner) for n in ast.walk(function) if isinstance(
      n, ast.Call) and _names.call_name(n) in _COLLECTS] if inner else []
  param = next((p for p in collected if p is not None), None)
  arg = _names.argument(node, [a.arg for a in function.args.args], param) if (
      param) else None
  return [(_literals(arg, home), project.module_of(home))] if isinstance(
      arg, (ast.Name, ast.List, ast.Tuple)) else []


def _param_of(node: ast.AST, home: _scopes.Scope) -> Optional[str]:
  """The parameter of the function (a list of scopes) the filter reads,
  through a loop over it (`for scope in scopes`)."""
  params = set(getattr(home, "params", ()))
  for name in sorted({n.id for n in _scopes.made_from(node, home)
                      if isinstance(n, ast.Name)}):
    source = home.loops.get(name)
    if name in params:
      return name
    if isinstance(source, ast.Name) and source.id in params:
      return source.id
  return None


def _handed(project: _project.Project, home: _scopes.Scope, param: str,
            depth: int) -> List[Tuple[Set[str], _project.Module]]:
  """For each call of the function (followed up through callers that
  pass on their own parameter), the literal scopes handed for `param`
  and the caller's module; empty when a call hands something else."""
  node = home.node
  if depth == 0 or not isinstance(node, (ast.FunctionDef,
                                         ast.AsyncFunctionDef)):
    return []
  params = [a.arg for a in node.args.args]
  found: List[Tuple[Set[str], _project.Module]] = []
  for scope, call in project.calls_named((node.name,), project.all_modules_with(
      (node.name,))):
    if scope is home:
      continue  # A same-named delegate (`model_utils.f(...)` in `f`).
    arg = _names.argument(call, params, param)
    if isinstance(arg, ast.Name) and arg.id in getattr(scope, "params", ()):
      outer = _handed(project, scope, arg.id, depth - 1)
      if not outer:
        return []
      found += outer
    elif isinstance(arg, (ast.Name, ast.List, ast.Tuple)):
      found.append((_literals(arg, scope), project.module_of(scope)))
    else:
      return []
  return found


def _literals(value: ast.expr, scope: _scopes.Scope) -> Set[str]:
  """The string literals a list of scopes is made of: in its value, the
  values of the names it reads, and the functions of `scope` it calls
  (`get_scopes_to_train()`)."""
  found: Set[str] = set()
  for node in _scopes.made_from(value, scope):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
      found.add(node.value.strip("/").split("/")[0])
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
      inner = scope.function(node.func.id)
      if inner is not None:
        found |= {n.value.strip("/").split("/")[0] for n in ast.walk(
            inner[0]) if isinstance(n, ast.Constant) and isinstance(
                n.value, str)}
  return {f for f in found if f.isidentifier()}


def _roots(project: _project.Project, start: _project.Module) -> Set[str]:
  """The literal root scopes opened around trainable variables in
  `start` and the modules it imports, at any depth."""
  seen: Set[int] = set()
  queue = [start]
  roots: Set[str] = set()
  while queue and len(seen) < 200:
    module = queue.pop()
    if id(module) in seen or project.parsed(module) is None:
      continue
    seen.add(id(module))
    if module.tree is not None:
      _open(module.tree.body, roots)
    for where, attribute in module.imports.values():
      level = len(where) - len(where.lstrip("."))
      for name in (where.lstrip("."), f"{where.lstrip('.')}.{attribute}"):
        found = project.find_module(name.strip("."), module, level)
        if found is not None:
          queue.append(found)
  return roots


def _open(body: List[ast.stmt], roots: Set[str]) -> None:
  """Adds the literal scopes `body` opens outside any other scope."""
  for statement in body:
    if isinstance(statement, ast.With):
      literal = [i.context_expr.args[0].value for i in statement.items
                 if isinstance(i.context_expr, ast.Call) and _names.call_name(
                     i.context_expr) in _names.TF_SCOPES and i.context_expr.args and (
                         isinstance(i.context_expr.args[0], ast.Constant))]
      if literal and isinstance(literal[0], str):
        if _trainable_inside(statement):
          roots.add(literal[0].strip("/").split("/")[0])
        continue
    for block in _scopes.blocks(statement):
      _open(block, roots)


def _trainable_inside(statement: ast.With) -> bool:
  """Whether the scope may hold trainable variables: some call in it is
  not a `Variable` / `get_variable` made with `trainable=False`."""
  made = [n for n in ast.walk(statement) if isinstance(n, ast.Call) and (
      _names.call_name(n) in _MAKERS)]
  return not made or not all(any(
      k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
          k.value.value is False) for k in n.keywords) for n in made)
