"""A call a class makes on itself (`self.m(...)` in one of its methods)
runs, for an object of a subclass of the project, that subclass's
override of `m`: the override is called with that call's arguments
(incremental-eureka's `Trainer.__prepare` calling
`self._create_optimizer(config, loss, self.model.trainable_variables)`,
`RMSPropTrainer._create_optimizer` passing its `var_list` to `minimize`).

What the call is decides, not how it is spelled: the receiver is the
first parameter of the method the call is written in (whatever its name),
not rebound there, of a method that is neither a `staticmethod` nor a
`classmethod`; the override's class derives, through the project's
classes, from the class whose method makes the call, and still runs
that calling method: inherits it, or each override of it on the way up
calls `super().name(...)` (a sibling class's call, an unrelated class's
method of the same name, or a base's call in a method the override's
class overrides without `super()`, never reaches it). A private name is
its class's own (`self.__m()` is `self._Base__m()`): a private calling
method is never overridden, a private callee never is an override. A
call in a function nested in the method is not read (the name may be
another object there).

>>> from tfpartial._tools.scan import _files, _project
>>> text = ("class Base:\\n  def run(self, x):\\n"
...         "    return self.hook(x)\\n"
...         "class Leaf(Base):\\n  def hook(self, x):\\n    return x\\n"
...         "class Other:\\n  def hook(self, x):\\n    return x\\n")
>>> project = _project.Project([_files.Source("t.py", text)])
>>> module = project.parsed(project.modules[0])
>>> run = [s for s in module.all() if getattr(s.node, "name", "") == "run"]
>>> hooks = [s for s in module.all()
...          if getattr(s.node, "name", "") == "hook"]
>>> call = [n for n in run[0].nodes if isinstance(n, ast.Call)][0]
>>> [reaches(project, call, run[0], hook) for hook in hooks]
[True, False]
"""

from __future__ import annotations

import ast
from typing import Any, Dict, FrozenSet, List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

Project = Any  # `_project.Project`, which the flow imports with this.
# The builtin decorators whose method's first parameter is no instance.
_NOT_BOUND = frozenset({"staticmethod", "classmethod"})


def reaches(project: Project, call: ast.Call, scope: _scopes.Scope,
            method: Optional[_scopes.Scope]) -> bool:
  """Whether `call`, in the method `scope`, calls on the method's own
  object the method `method` overrides in a subclass of the project (so
  runs `method` for an object of that subclass)."""
  func = call.func
  if method is None or method.cls is None or not isinstance(
      func, ast.Attribute) or not isinstance(func.value, ast.Name) or (
          func.attr != getattr(method.node, "name", None)):
    return False
  caller = scope.node
  if scope.cls is None or not isinstance(
      caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  positional = [*caller.args.posonlyargs, *caller.args.args]
  if not positional or positional[0].arg != func.value.id or (
      func.value.id in scope.defs) or _unbound(project, caller, scope):
    return False
  if _private(func.attr) or method.cls is scope.cls or scope.cls not in (
      project.base_classes(method.cls)):
    return False  # `self.__m()` is `self._Base__m()`: no override.
  return _private(caller.name) or _runs(project, method.cls, scope)


def _private(name: str) -> bool:
  """Whether Python mangles `name` with its class's name (`__m`)."""
  return name.startswith("__") and not name.endswith("__")


def _runs(project: Project, leaf: _scopes.ClassInfo,
          scope: _scopes.Scope) -> bool:
  """Whether an object of `leaf` may run the method `scope`: `leaf`
  inherits it, or each override of it on the way up calls
  `super().name(...)`. Each override is read once per calling method
  (what it leads to is kept on `scope`), at most 33 deep."""
  name = getattr(scope.node, "name", "")
  memo: Dict[int, bool] = scope.once(("overrides running", None, 0), dict)
  current = project.method(leaf, name)
  path: List[_scopes.Scope] = []
  while current is not None and current is not scope and id(
      current.node) not in memo and len(path) <= 32:
    path.append(current)
    if current.cls is None or name not in _super_calls(current):
      current = None
    else:
      current = project.method(current.cls, name, above=True)
  found = current is scope or current is not None and memo.get(
      id(current.node), False)
  for each in path:
    memo[id(each.node)] = found
  return found


def _super_calls(method: _scopes.Scope) -> FrozenSet[str]:
  """The names `method` calls on `super()` (its own body, read once)."""
  found: FrozenSet[str] = method.once(
      ("super calls", None, 0), lambda: frozenset(
          n.func.attr for n in method.nodes if isinstance(n, ast.Call)
          and isinstance(n.func, ast.Attribute) and _is_super(n.func.value)))
  return found


def _is_super(node: ast.expr) -> bool:
  """Whether `node` is a call of the builtin `super`."""
  return isinstance(node, ast.Call) and isinstance(
      node.func, ast.Name) and node.func.id == "super"


def _unbound(project: Project, function: ast.AST,
             scope: _scopes.Scope) -> bool:
  """Whether a builtin decorator (`staticmethod`, `classmethod`, a name
  the project does not define) makes the method's first parameter no
  instance of its class."""
  for decorator in getattr(function, "decorator_list", ()):
    name = _names.dotted(decorator) or ""
    if name.split(".")[-1] in _NOT_BOUND and project.resolve(
        scope, name) is None:
      return True
  return False
