"""Whether an object is made inside the scope its filter names, so that
the filter keeps all it builds: every caller opens the scope it hands the
object (`with tf.variable_scope(scope): model = CVAE(..., scope=scope)`,
and the object filters `scope=self.scope`), or a decorator opens the
object's own scope around a method (`with tf.variable_scope(self.vs):
return func(*args)`), so what the method opens is nested under it.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes


def made_inside(project: _project.Project, info: _scopes.ClassInfo,
                attribute: str) -> bool:
  """Whether the class (or a subclass) sets `self.<attribute>` from a
  constructor parameter, and every call that makes it is inside a scope
  opened on the value it passes for that parameter."""
  made = False
  for each in [info, *project.subclasses(info)]:
    init = each.methods.get("__init__")
    param = _param_of(init, attribute) if init is not None else None
    if param is None:
      continue
    modules = project.all_modules_with((each.name,))
    if len(modules) > _project.MAX_CALLER_MODULES:
      return False  # Too common a name to tell this class's calls.
    for scope, call in project.calls_named((each.name,), modules):
      handed = _handed(call, init, param) if init is not None else None
      if handed is None or not _inside(scope, call, handed):
        return False
      made = True
  return made


def _param_of(init: _scopes.Scope, attribute: str) -> Optional[str]:
  """The parameter of `__init__` assigned whole to `self.<attribute>`."""
  node = init.node
  if not isinstance(node, ast.FunctionDef):
    return None
  params = {a.arg for a in node.args.args + node.args.kwonlyargs}
  for statement in ast.walk(node):
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and (
        _names.dotted(statement.targets[0]) == f"self.{attribute}") and (
            isinstance(statement.value, ast.Name)) and (
                statement.value.id in params):
      return statement.value.id
  return None


def _handed(call: ast.Call, init: _scopes.Scope, param: str
            ) -> Optional[ast.expr]:
  """What `call` passes for the constructor's parameter `param`."""
  for keyword in call.keywords:
    if keyword.arg == param:
      return keyword.value
  node = init.node
  names = [a.arg for a in getattr(node, "args").args][1:]  # Past `self`.
  index = names.index(param) if param in names else len(call.args)
  return call.args[index] if index < len(call.args) and not any(
      isinstance(a, ast.Starred) for a in call.args[:index + 1]) else None


def _inside(scope: _scopes.Scope, call: ast.Call, handed: ast.expr) -> bool:
  """Whether `call` sits in a `with` opening a scope on `handed`."""
  text = ast.unparse(handed)
  for node in _scopes.walk(scope.node):
    if isinstance(node, (ast.With, ast.AsyncWith)) and _encloses(
        node, call) and any(
            isinstance(i.context_expr, ast.Call) and _names.call_name(
                i.context_expr) in _names.TF_SCOPES and i.context_expr.args and (
                    ast.unparse(i.context_expr.args[0]) == text)
            for i in node.items):
      return True
  return False


def _encloses(outer: ast.With | ast.AsyncWith, inner: ast.AST) -> bool:
  start, end = outer.body[0].lineno, outer.end_lineno or outer.lineno
  line: int = getattr(inner, "lineno", 0)
  return start <= line <= end


def opened_around(project: _project.Project, method: _scopes.Scope,
                  own: List[str]) -> bool:
  """Whether a decorator of the method is a project function that opens
  a scope on an attribute of its object (`self.vs`) that the class made
  inside its own scope (`with tf.variable_scope(name) as vs: self.vs =
  vs`, `own` holding `vs`)."""
  for decorator in getattr(method.node, "decorator_list", []):
    name = _names.dotted(decorator)
    target = project.resolve(method, name) if name else None
    if not isinstance(target, tuple):
      continue
    for node in ast.walk(target[0]):
      if isinstance(node, ast.Call) and _names.call_name(
          node) in _names.TF_SCOPES and node.args and isinstance(
              node.args[0], ast.Attribute) and node.args[0].attr in own:
        return True
  return False


def own_attributes(info: _scopes.ClassInfo, attribute: str,
                   own: List[str]) -> List[str]:
  """The attributes that hold the object's own scope: `attribute`, and
  those set to what a `with` opening it yields (`with
  tf.variable_scope(name) as vs: self.vs = vs`, `name` in `own`)."""
  found = [attribute]
  for node in ast.walk(info.node):
    if not isinstance(node, ast.With):
      continue
    yielded = {i.optional_vars.id for i in node.items if isinstance(
        i.optional_vars, ast.Name) and isinstance(
            i.context_expr, ast.Call) and i.context_expr.args and (
                _own(i.context_expr.args[0], attribute, own))}
    found += [t.attr for statement in node.body if isinstance(
        statement, ast.Assign) and isinstance(statement.value, ast.Name) and (
            statement.value.id in yielded) for t in statement.targets
              if isinstance(t, ast.Attribute)]
  return found


def _own(value: ast.expr, attribute: str, own: List[str]) -> bool:
  return isinstance(value, ast.Name) and value.id in own or (
      _names.dotted(value) == f"self.{attribute}")
