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
that calling method: its class's method resolution order (C3 over the
project's classes; none where a class with several bases has one the
project does not define) resolves the name to it, or to overrides each
calling `super().name(...)` on the way (a sibling class's call, an
unrelated class's method of the same name, a mixin listed first whose
override does not call `super()`, or a base's call in a method the
override's class overrides without `super()`, never reaches it), and
something calls it on such an object: Python (`__init__`), a call on
another object the caller builds of that class (`t = Leaf(x)`;
`t.prepare()`), no call at all of a public method (an entry point; not
one more than 12 modules name), or the object's own calls in methods
that run on it in turn (a base's `__init__`
calling `self.__prepare()` runs it only where the subclass keeps that
`__init__`). A private name is its class's own (`self.__m()` is
`self._Base__m()`): a private calling method is never overridden (nor
run where nothing calls it), a private callee never is an override. A
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
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

Project = Any  # `_project.Project`, which the flow imports with this.
# The builtin decorators whose method's first parameter is no instance.
_NOT_BOUND = frozenset({"staticmethod", "classmethod"})
# The key of a class's method resolution order among its home's facts.
_ORDER = "method resolution order"
# Past this many modules naming a method, its calls are not told apart
# (none is known: the method is not taken to run).
_CALLER_MODULES = 12


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
  return _runs(project, method.cls, scope, 0)


def _private(name: str) -> bool:
  """Whether Python mangles `name` with its class's name (`__m`)."""
  return name.startswith("__") and not name.endswith("__")


def _runs(project: Project, leaf: _scopes.ClassInfo,
          scope: _scopes.Scope, depth: int) -> bool:
  """Whether an object of `leaf` may run the method `scope`: `leaf`'s
  MRO resolves its name to it (`_inherited`) and something calls it on
  such an object (`_called`). Read once per class and method (a cycle
  of callers, or one more than 8 deep, runs nothing)."""
  memo: Dict[int, bool] = scope.once(("runs on", None, 0), dict)
  key = id(leaf.node)
  if key not in memo:
    memo[key] = False
    memo[key] = depth <= 8 and _inherited(project, leaf, scope) and (
        _called(project, leaf, scope, depth))
  return memo[key]


def _called(project: Project, leaf: _scopes.ClassInfo,
            scope: _scopes.Scope, depth: int) -> bool:
  """Whether something calls `scope` on an object of `leaf`: Python (a
  special method, `__init__`), a call on another object the caller
  builds of `leaf` or a subclass (`Leaf(x).m()`, or a name bound once to
  one), a public method no call names (an entry point), or a call on
  the object itself in a method that runs on it. A call on an object
  not known to be one does not count. A private method nobody calls
  never runs, nor one named in too many modules to tell its calls
  apart."""
  name = getattr(scope.node, "name", "")
  if name.startswith("__") and name.endswith("__"):
    return True
  callers = _self_callers(project, scope)
  if callers is None:
    return True
  mine, others = callers
  if any(o is leaf or leaf in project.base_classes(o) for o in others):
    return True
  order = _mro(project, leaf, 0) or []
  return any(c.cls is not None and any(c.cls is o for o in order) and (
      _runs(project, leaf, c, depth + 1)) for c in mine)


Callers = Tuple[List[_scopes.Scope], List[_scopes.ClassInfo]]


def _self_callers(project: Project, scope: _scopes.Scope
                  ) -> Optional[Callers]:
  """The methods calling `scope`'s name on their own object, and the
  classes of the other objects a call of the name is made on where the
  caller builds them (`Leaf(x).m()`; none for an object it does not),
  or None for a public method no call names; none where more than 12
  modules name it. A call through `super()` is an override's
  (`_inherited` reads it). Read once per method."""
  name = getattr(scope.node, "name", "")

  def read() -> Optional[Callers]:
    found: List[_scopes.Scope] = []
    others: List[_scopes.ClassInfo] = []
    modules = project.all_modules_with((name,))
    if len(modules) > _CALLER_MODULES:
      return [], []  # Too common a name to tell its calls apart.
    named = False
    for home, call in project.calls_named((name,), modules):
      func = call.func
      if not isinstance(func, ast.Attribute) or _is_super(func.value):
        continue
      named = True
      if _on_itself(home, func.value):
        found.append(home)
        continue
      built = built_class(project, home, func.value)
      if built is not None:
        others.append(built)
    return (found, others) if named or _private(name) else None
  return scope.once(("self callers", None, 0), read)


def built_class(project: Project, home: _scopes.Scope, value: ast.expr
                ) -> Optional[_scopes.ClassInfo]:
  """The project class `value` is a construction of (`Leaf(x)`), or a
  name bound once in `home` to one, else None."""
  if isinstance(value, ast.Name):
    defs = home.defs.get(value.id, ())
    value = defs[0].value if len(defs) == 1 and (
        defs[0].value is not None) else value
  if not isinstance(value, ast.Call):
    return None
  target = project.resolve(home, _names.dotted(value.func) or "")
  return target if isinstance(target, _scopes.ClassInfo) else None


def _on_itself(home: _scopes.Scope, value: ast.expr) -> bool:
  """Whether `value` is the first parameter of the method `home`."""
  node = home.node
  if home.cls is None or not isinstance(value, ast.Name) or (
      not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))):
    return False
  positional = [*node.args.posonlyargs, *node.args.args]
  return bool(positional) and positional[0].arg == value.id and (
      value.id not in home.defs)


def _inherited(project: Project, leaf: _scopes.ClassInfo,
               scope: _scopes.Scope) -> bool:
  """Whether `leaf`'s MRO resolves the name of `scope` to it, or to an
  override each on the way calling `super().name(...)` (a private name
  is its class's own). What a class's own MRO leads to is kept per
  calling method: on a chain each override is read once; a class whose
  order gains a mixin after it is walked again (at most 33 classes)."""
  order = _mro(project, leaf, 0)
  if order is None:
    return False
  name = getattr(scope.node, "name", "")
  if _private(name):
    return any(c is scope.cls for c in order)
  memo: Dict[ast.AST, bool] = scope.once(("inherited by", None, 0), dict)
  path: List[ast.AST] = []
  found = False
  for index, each in enumerate(order):
    # C3 keeps a class's own order within its subclasses' (monotonic):
    # the same length after it is the same order. Every class on the
    # way had its order read for `leaf`'s.
    own = each.home.judged[(_ORDER, each.node, 0)]
    mine = isinstance(own, list) and len(own) == len(order) - index
    if mine and each.node in memo:
      found = memo[each.node]
      break
    if mine:
      path.append(each.node)
    current = each.methods[name] if name in each.methods else None
    if current is scope or current is not None and (
        name not in _super_calls(current)):
      found = current is scope
      break
  for key in path:
    memo[key] = found
  return found


def _mro(project: Project, info: _scopes.ClassInfo, depth: int
         ) -> Optional[List[_scopes.ClassInfo]]:
  """The class's method resolution order among the project's classes
  (C3, as Python computes it), or None where a class with several bases
  has one the project does not define (a library's class may come
  anywhere) or the order is past 33 classes. One base outside the
  project ends the order. Read once per class (a cycle of bases, or
  one past 33 deep, has none)."""
  def compute() -> Optional[List[_scopes.ClassInfo]]:
    if depth > 32:
      return None
    if not info.bases:
      return [info]
    bases = [project.resolve(info.home, b) if b else None
             for b in info.bases]
    first = bases[0]
    if len(bases) == 1 and not isinstance(first, _scopes.ClassInfo):
      return [info]
    if len(bases) == 1 and isinstance(first, _scopes.ClassInfo):
      above = _mro(project, first, depth + 1)
      return None if above is None else [info, *above]
    orders = [_mro(project, b, depth + 1) if isinstance(
        b, _scopes.ClassInfo) else None for b in bases]
    if any(o is None for o in orders):
      return None
    merged = _merge([[*o] for o in orders if o] + [list(bases)])
    return None if merged is None else [info, *merged]
  known = info.home.judged
  key = (_ORDER, info.node, 0)
  if key not in known:
    known[key] = None  # A class deriving from itself has no order.
    found = compute()
    known[key] = found if found is None or len(found) <= 33 else None
  order = known[key]
  return order if isinstance(order, list) else None


def _merge(orders: List[List[Any]]) -> Optional[List[Any]]:
  """C3's merge of the bases' orders (None where none is consistent, or
  past 33 classes)."""
  merged: List[Any] = []
  while orders and len(merged) <= 33:
    tails = {c.node for o in orders for c in o[1:]}
    head = next((o[0] for o in orders if o[0].node not in tails), None)
    if head is None:
      return None
    merged.append(head)
    orders = [r for r in ([c for c in o if c is not head] for o in orders)
              if r]
  return merged if not orders else None


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
