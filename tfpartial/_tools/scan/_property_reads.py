"""A variable list read through a property of a class of the project
(`net.trainable_variables` where `Network` defines `@property def
trainable_variables(self): ... return var_list`): what the flow gives
such a read is what the property's method returns for that object, as a
call of the same method would (`net.trainable_variables()`), not the
object's whole variables that the attribute's name would suggest. A
read whose object the flow does not resolve to a project class, or whose
class defines no property of that name (a Keras model's own
`trainable_variables`), or whose property only drops moving statistics
from its base class's list (`super().trainable_variables`, from any
object), is read as before (one dropping them from a list it builds is
read as that list); a class known only from a parameter's annotation
decides only where every project subclass of it resolves the name to the
same property (not its own, nor a mixin's listed first), and every
construction of the class holding it is shown to pass a construction of
the declared class (or a project subclass), no other object assigns the
attribute and no module calls `setattr`.

>>> import ast
>>> from tfpartial._tools.scan import _files, _project
>>> from tfpartial._tools.scan._flow import Flow
>>> text = ("import tensorflow as tf\\n"
...         "class Net:\\n  @property\\n  def trainable_variables(self):\\n"
...         "    return tf.get_collection('trainable_variables',"
...         " scope='head')\\n"
...         "net = Net()\\nchosen = net.trainable_variables\\n")
>>> project = _project.Project([_files.Source("t.py", text)])
>>> scope = project.parsed(project.modules[0])
>>> read = [n for n in scope.nodes if isinstance(n, ast.Attribute)
...         and n.attr == "trainable_variables"][-1]
>>> "filtered" in returned(Flow(project), read, scope, {})
True
"""

from __future__ import annotations

import ast
from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from tfpartial._tools.scan import _base_calls
from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _statistics
from tfpartial._tools.scan._labels import Labels, union

Flow = Any  # `_flow.Flow`, which imports this module.
# The decorators that make a method a property (the builtin's, or
# functools').
_PROPERTIES = frozenset({"property", "cached_property"})


def returned(flow: Flow, node: ast.Attribute, scope: _scopes.Scope,
             env: Dict[str, Labels]) -> Optional[Labels]:
  """What the property `node` reads returns for its object, or None when
  `node` reads no property of a class of the project."""
  method = read(flow, node, scope, env)
  if method is None:
    return None
  sources = _statistics_sources(method)
  if sources:  # Moving statistics dropped from a list it filters itself.
    return union(flow.labels(source, method) for source in sources)
  arguments = []
  if id(method.node) in flow.bound_self and method.params[:1]:
    arguments = [{"obj": flow.bound_self[id(method.node)]}]
  result: Labels = flow.helper(method.node, method.parent, arguments, {})
  return result


def _statistics_sources(method: _scopes.Scope) -> List[ast.expr]:
  """What each of the property's returns keeps from, where every one
  only drops moving statistics (which no optimizer trains): the list it
  is read as. Empty for any other property."""
  returns = [n.value for n in method.nodes if isinstance(n, ast.Return)]
  sources = [_statistics.looked_through(r) if r is not None else None
             for r in returns]
  return [s for s in sources if s is not None] if returns and all(
      sources) else []


def read(flow: Flow, node: ast.Attribute, scope: _scopes.Scope,
         env: Optional[Dict[str, Labels]] = None
         ) -> Optional[_scopes.Scope]:
  """The scope of the property's method `node` reads, if it reads a
  property of a class of the project. A read of the class's own property
  (`self.variables`) is left to the idiom's own reading of it (a Keras
  model's override dropping moving statistics, `_moving`)."""
  if isinstance(node.value, ast.Name) and node.value.id == "self":
    return None
  found = _calls.method(flow, node, scope, env or {})
  function = flow.functions.get(id(found.get("fn")))
  if function is not None:
    method: Optional[_scopes.Scope] = function[1].scope_of(function[0])
  else:  # An object the flow does not follow: its class, if declared.
    info = flow.typed.class_of(node.value, scope)
    if info is None:  # Annotated: no subclass may run another property.
      info = _declared(flow, node.value, scope)
      info = None if info is None or _overridden(
          flow.project, info, node.attr) else info
    method = flow.project.method(info, node.attr) if info else None
  if method is None or method.parent is None or not _is_property(
      flow, method.node, method.parent) or _moving_only(method):
    return None
  return method


def _overridden(project: Any, info: _scopes.ClassInfo, name: str) -> bool:
  """Whether an object annotated `info` may run another `name`: a
  project subclass of it (at most 32 read) resolving `name` elsewhere
  (its own, or a mixin's listed first), or with a base the project does
  not define beside another (a library's class may define it)."""
  own = project.method(info, name)
  queue, seen = [info], {id(info.node)}
  while queue and len(seen) <= 32:
    for each in project.subclasses(queue.pop()):
      if project.method(each, name) is not own or _foreign(project, each):
        return True
      if id(each.node) not in seen:
        seen.add(id(each.node))
        queue.append(each)
  return bool(queue)


def _foreign(project: Any, info: _scopes.ClassInfo) -> bool:
  """Whether `info` has several bases, one not a class of the project."""
  return len(info.bases) > 1 and any(
      not isinstance(project.resolve(info.home, base) if base else None,
                     _scopes.ClassInfo) for base in info.bases)


def _moving_only(method: _scopes.Scope) -> bool:
  """Whether the property returns a list that only drops moving
  statistics from the object's own list (a Keras model's override,
  `super().trainable_variables`, read as the model's own list): not
  from a list it builds or a part's (`self.head.variables`)."""
  returns = [n.value for n in method.nodes if isinstance(n, ast.Return)]
  return bool(returns) and all(
      r is not None and _own_list(_statistics.looked_through(r), method)
      for r in returns)


def _own_list(source: Optional[ast.expr], method: _scopes.Scope) -> bool:
  """Whether `source` reads an attribute of the object itself through
  `super()` (the base class's list of it)."""
  return isinstance(source, ast.Attribute) and isinstance(
      source.value, ast.Call) and isinstance(
          source.value.func, ast.Name) and source.value.func.id == "super" \
      and method.cls is not None


def _declared(flow: Flow, node: ast.expr, scope: _scopes.Scope
              ) -> Optional[_scopes.ClassInfo]:
  """The one project class that annotates the parameter `node` holds: the
  parameter itself (`model` of `def __init__(self, model: Network)`) or
  an attribute of `self` that every assignment, in the class, its bases
  and its project subclasses, sets to such a parameter (`self.model =
  model`)."""
  values: Optional[List[Tuple[ast.expr, _scopes.Scope]]] = [(node, scope)]
  if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self":
    owner = _scopes.enclosing_class(scope)
    values = _stored(flow.project, owner, node.attr) if (
        owner is not None) else None
  if values is None:
    return None
  found = set()
  for value, home in values:
    annotation = _annotation(home, value)
    target = flow.project.resolve(home, annotation) if annotation else None
    if not isinstance(target, _scopes.ClassInfo) or _passed_otherwise(
        flow.project, home, value, target):
      return None  # Not a parameter, not annotated, or not the project's.
    found.add(target)
  return found.pop() if len(found) == 1 else None


def _passed_otherwise(project: Any, home: _scopes.Scope, value: ast.expr,
                      declared: _scopes.ClassInfo) -> bool:
  """Whether the parameter `value` names of the `__init__` `home` may
  hold an object of a class other than `declared` (Python does not check
  the annotation): unless every construction of its class, and of each
  project subclass keeping that `__init__` (or reaching it by
  `super().__init__(...)`), is shown to pass a construction of
  `declared` or of a project subclass of it (`Net(x)`, or a name bound
  once in the caller to one). A factory's call, an entry, an attribute,
  a parameter or a default is not shown. Read once per parameter; a
  class named in more than 12 modules counts as passed otherwise."""
  node, owner = home.node, home.cls
  if owner is None or not isinstance(value, ast.Name) or not isinstance(
      node, ast.FunctionDef) or node.name != "__init__":
    return True
  names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)][1:]
  if value.id not in names:
    return True
  position = names.index(value.id)
  found: bool = home.once(
      ("passed otherwise", value.id, 0), lambda: _not_shown(
          project, home, owner, (value.id, position), declared))
  return found


def _not_shown(project: Any, home: _scopes.Scope, owner: _scopes.ClassInfo,
               parameter: Tuple[str, int], declared: _scopes.ClassInfo,
               depth: int = 0) -> bool:
  """Whether some construction of `owner` or of a project subclass (at
  most 32 read) may pass `parameter` something not shown to be an
  object of `declared`."""
  queue, seen = [owner], {id(owner.node)}
  while queue and len(seen) <= 32:
    each = queue.pop()
    init = project.method(each, "__init__")
    if init is home and not _constructions_pass(
        project, each, parameter, declared):
      return True
    if init is not home and init is not None and init.cls is each and (
        not _super_inits_pass(project, init, parameter, declared, depth)):
      return True
    for sub in project.subclasses(each):
      if id(sub.node) not in seen:
        seen.add(id(sub.node))
        queue.append(sub)
  return bool(queue)


def _constructions_pass(project: Any, info: _scopes.ClassInfo,
                        parameter: Tuple[str, int],
                        declared: _scopes.ClassInfo) -> bool:
  """Whether every construction of `info` passes `parameter` (by keyword
  or at its position) a construction of `declared` (or a subclass)."""
  modules = project.all_modules_with((info.name,))
  if len(modules) > 12:
    return False
  for scope, call in project.calls_named((info.name,), modules):
    if project.resolve(scope, _names.dotted(call.func) or "") is not info:
      continue
    if not _passes_declared(project, scope, call, parameter, declared):
      return False
  return True


def _super_inits_pass(project: Any, init: _scopes.Scope,
                      parameter: Tuple[str, int],
                      declared: _scopes.ClassInfo, depth: int) -> bool:
  """Whether every call of a base's `__init__` a subclass's own
  `__init__` makes (`super().__init__(...)`, `Base.__init__(self,
  ...)`) passes `parameter` a construction of `declared`, or its own
  parameter that every construction of its class passes one (at most 8
  classes down)."""
  name, position = parameter
  for call in (n for n in init.nodes if isinstance(n, ast.Call)):
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "__init__":
      continue
    skip = 0 if isinstance(func.value, ast.Call) else 1
    forwarded = _forwarded(init, call, (name, position + skip))
    if forwarded is not None and init.cls is not None and depth < 8:
      if _not_shown(project, init, init.cls, forwarded, declared,
                    depth + 1):
        return False
    elif not _passes_declared(project, init, call,
                              (name, position + skip), declared):
      return False
  return True


def _forwarded(init: _scopes.Scope, call: ast.Call,
               parameter: Tuple[str, int]) -> Optional[Tuple[str, int]]:
  """The parameter of `init` (its name and position after `self`) that
  `call` passes on unchanged as `parameter`, if it does."""
  name, position = parameter
  given = [k.value for k in call.keywords if k.arg == name] + (
      call.args[position:position + 1] if not any(
          isinstance(a, ast.Starred) for a in call.args) else [])
  node = init.node
  if len(given) != 1 or not isinstance(given[0], ast.Name) or (
      not isinstance(node, ast.FunctionDef)) or given[0].id in init.defs:
    return None
  names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)][1:]
  return (given[0].id, names.index(given[0].id)) if (
      given[0].id in names) else None


def _passes_declared(project: Any, scope: _scopes.Scope, call: ast.Call,
                     parameter: Tuple[str, int],
                     declared: _scopes.ClassInfo) -> bool:
  """Whether `call` passes `parameter` a construction of `declared` or of
  a project subclass of it, directly or through a name bound once in
  `scope` to one."""
  name, position = parameter
  if any(isinstance(a, ast.Starred) for a in call.args) or any(
      k.arg is None for k in call.keywords):
    return False
  given = [k.value for k in call.keywords if k.arg == name] + (
      call.args[position:position + 1])
  if len(given) != 1:
    return False
  built = _base_calls.built_class(project, scope, given[0])
  return built is not None and (
      built is declared or declared in project.base_classes(built))


def _stored(project: Any, owner: _scopes.ClassInfo, attribute: str
            ) -> Optional[List[Tuple[ast.expr, _scopes.Scope]]]:
  """Every assignment of `self.attribute` in `owner`, its bases and its
  project subclasses (at most 32 read; a subclass may keep another
  object there), or None where a class's module may store it otherwise
  (`setattr`). Read once per class and attribute."""
  found: Optional[List[Tuple[ast.expr, _scopes.Scope]]] = owner.home.once(
      ("stored in subclasses", (id(owner.node), attribute), 0),
      lambda: _stored_now(project, owner, attribute))
  return found


def _stored_now(project: Any, owner: _scopes.ClassInfo, attribute: str
                ) -> Optional[List[Tuple[ast.expr, _scopes.Scope]]]:
  if _set_elsewhere(project, attribute):
    return None
  values: List[Tuple[ast.expr, _scopes.Scope]] = []
  queue, seen = [owner], {id(owner.node)}
  while queue and len(seen) <= 32:
    each = queue.pop()
    values += project.attribute(each, f"self.{attribute}")
    for sub in project.subclasses(each):
      if id(sub.node) not in seen:
        seen.add(id(sub.node))
        queue.append(sub)
  return None if queue else values


def _set_elsewhere(project: Any, attribute: str) -> bool:
  """Whether a module of the project calls `setattr` (its syntax tree,
  not its text: a comment naming it is no call), or assigns `attribute`
  on an object other than a method's `self` (`t.model = Whole(x)`)."""
  for module in project.all_modules_with(("setattr", attribute)):
    tree = project.parsed(module)
    if tree is None:
      continue
    calls, stored = tree.once(("set elsewhere", None, 0),
                              lambda: _settings(tree))
    if calls or attribute in stored:
      return True
  return False


def _settings(module: _scopes.Scope) -> Tuple[bool, FrozenSet[str]]:
  """Whether the module calls `setattr`, and the attributes it assigns on
  objects other than `self` (its tree walked once)."""
  calls, stored = False, set()
  for node in ast.walk(module.node):
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Name) and node.func.id == "setattr":
      calls = True
    if isinstance(node, ast.Attribute) and isinstance(
        node.ctx, ast.Store) and not (
            isinstance(node.value, ast.Name) and node.value.id == "self"):
      stored.add(node.attr)
  return calls, frozenset(stored)


def _annotation(home: _scopes.Scope, value: ast.expr) -> Optional[str]:
  """The dotted name annotating the parameter `value` names in `home`,
  if it names one that nothing in `home` rebinds."""
  function = home.node
  if not isinstance(value, ast.Name) or not isinstance(
      function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  given = [a for a in (*function.args.posonlyargs, *function.args.args,
                       *function.args.kwonlyargs) if a.arg == value.id]
  if len(given) != 1 or given[0].annotation is None or (
      value.id in home.once(("stored names", None, 0), lambda: frozenset(
          n.id for n in ast.walk(function) if isinstance(n, ast.Name)
          and isinstance(n.ctx, ast.Store)))):
    return None
  return _names.dotted(given[0].annotation)


def _is_property(flow: Flow, method: ast.AST, home: _scopes.Scope
                 ) -> bool:
  """Whether `method` is decorated as a property by a name the project
  does not define itself (`@property`, `@functools.cached_property`)."""
  if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  for decorator in method.decorator_list:
    name = _names.dotted(decorator) or ""
    if name.split(".")[-1] not in _PROPERTIES:
      continue
    if flow.project.resolve(home, name) is None:
      return True
  return False
