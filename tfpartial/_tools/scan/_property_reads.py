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
same property (not its own, nor a mixin's listed first), and no
construction passes the parameter an object of another project class.

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
from typing import Any, Dict, List, Optional, Tuple

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
  """Whether a construction of the class whose `__init__` is `home` (or
  of a project subclass inheriting it) passes the parameter `value`
  names an object of a project class not deriving from `declared`
  (`Whole(x)`, or a name the caller binds to one: Python does not check
  the annotation). Read once per parameter; a class named in more than
  12 modules counts as passed otherwise."""
  node, owner = home.node, home.cls
  if owner is None or not isinstance(value, ast.Name) or not isinstance(
      node, ast.FunctionDef) or node.name != "__init__":
    return False
  names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)][1:]
  position = names.index(value.id) if value.id in names else len(names)
  classes = [owner, *(c for c in project.subclasses(owner)
                      if "__init__" not in c.methods)][:33]
  found: bool = home.once(
      ("passed otherwise", value.id, 0), lambda: any(
          _passes_other(project, each, value.id, position, declared)
          for each in classes))
  return found


def _passes_other(project: Any, info: _scopes.ClassInfo, parameter: str,
                  position: int, declared: _scopes.ClassInfo) -> bool:
  """Whether a construction of `info` passes `parameter` (by keyword or
  at `position`) an object of a project class not deriving from
  `declared`."""
  modules = project.all_modules_with((info.name,))
  if len(modules) > 12:
    return True
  for scope, call in project.calls_named((info.name,), modules):
    if project.resolve(scope, _names.dotted(call.func) or "") is not info:
      continue
    given = [k.value for k in call.keywords if k.arg == parameter] + (
        call.args[position:position + 1] if not any(
            isinstance(a, ast.Starred) for a in call.args) else [])
    values = [d.value for g in given if isinstance(g, ast.Name)
              for d in scope.defs.get(g.id, ()) if d.value is not None]
    for each in [*given, *values]:
      built = project.resolve(scope, _names.dotted(each.func) or "") if (
          isinstance(each, ast.Call)) else None
      if isinstance(built, _scopes.ClassInfo) and built is not declared \
          and declared not in project.base_classes(built):
        return True
  return False


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
  values: List[Tuple[ast.expr, _scopes.Scope]] = []
  queue, seen = [owner], {id(owner.node)}
  while queue and len(seen) <= 32:
    each = queue.pop()
    source = getattr(each.home.module, "source", None)
    if "setattr" in getattr(source, "text", "setattr"):
      return None
    values += project.attribute(each, f"self.{attribute}")
    for sub in project.subclasses(each):
      if id(sub.node) not in seen:
        seen.add(id(sub.node))
        queue.append(sub)
  return None if queue else values


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
