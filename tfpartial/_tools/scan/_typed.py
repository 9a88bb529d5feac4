"""Which project class an expression holds where the code reaches it
indirectly: a name bound to a class called (or to a function that returns
one), a parameter every call site passes one class for, `obj.part` where
`obj`'s class assigns one (or a property returns one), and an entry of a
dict attribute (`model.heads['human']`).

One `Typed` per analysis (`Analysis.typed`), its answers kept per
(expression, scope).

>>> from tfpartial._tools.scan import _files, _project
>>> text = ("class Head:\\n  pass\\n"
...         "class Model:\\n  def __init__(self):\\n"
...         "    self._heads = {'human': Head()}\\n"
...         "  @property\\n  def heads(self):\\n    return self._heads\\n"
...         "def step(model):\\n  return model.heads['human']\\n"
...         "step(Model())\\n")
>>> project = _project.Project([_files.Source("t.py", text)])
>>> scope = project.parsed(project.modules[0])
>>> step = scope.scope_of(scope.functions["step"])
>>> returned = [n for n in step.nodes if isinstance(n, ast.Return)][0]
>>> Typed(project).class_of(returned.value, step).name
'Head'
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

Values = List[Tuple[ast.expr, _scopes.Scope]]

# How many names, attributes and calls an answer may go through.
_DEPTH = 8
# A function whose name more modules write than this is not typed by its
# callers (copies of a script each call their own copy's helper: more
# than `_project.MAX_CALLER_MODULES`, which the flow follows for labels).
_MAX_CALLER_MODULES = 64
# Bases of a module that is not a Keras layer (`x.trainable = False` is then
# a plain attribute that freezes nothing).
_MODULES = {"snt.Module", "sonnet.Module", "tf.Module", "tensorflow.Module"}


class Typed:
  """The project class of an expression, found once per scope."""

  def __init__(self, project: _project.Project):
    self.project = project
    self._known: Dict[Tuple[int, int], Optional[_scopes.ClassInfo]] = {}
    self._active: Set[Tuple[int, int]] = set()

  def class_of(self, node: ast.AST, scope: _scopes.Scope, depth: int = 0
               ) -> Optional[_scopes.ClassInfo]:
    """The project class `node` holds in `scope`, if one is known."""
    key = (id(node), id(scope))
    if key in self._known:
      return self._known[key]
    if key in self._active or depth > _DEPTH:
      return None
    self._active.add(key)
    try:
      found = self._class(node, scope, depth + 1)
    finally:
      self._active.discard(key)
    if depth == 0:  # Inner answers may be cut short by the depth.
      self._known[key] = found
    return found

  def holds_sonnet(self, node: ast.AST, scope: _scopes.Scope) -> bool:
    """Whether `node` holds a Sonnet module: of a project class that is
    one (`sonnet`), or made by Sonnet itself (`snt.Sequential([...])`)."""
    info = self.class_of(node, scope)
    if info is not None:
      return self.sonnet(info)
    made = self._leaves(node, scope, 1) if isinstance(
        node, (ast.Name, ast.Attribute, ast.Subscript)) else None
    return bool(made) and all(isinstance(v, ast.Call) and (
        _names.dotted(v.func) or "").split(".")[0] in {"snt", "sonnet"}
        for v, _ in made or ())

  def sonnet(self, info: _scopes.ClassInfo) -> bool:
    """Whether `info` is a `snt.Module` (or a plain `tf.Module`) and not
    a Keras layer: its `trainable` is no switch."""
    bases = [b for each in [info, *self.project.base_classes(info)]
             for b in each.bases]
    return any(b in _MODULES for b in bases) and not any(
        "keras" in b.lower() or b.split(".")[-1] in {"Layer", "Model"}
        for b in bases)

  def _class(self, node: ast.AST, scope: _scopes.Scope, depth: int
             ) -> Optional[_scopes.ClassInfo]:
    if isinstance(node, ast.Name) and node.id == "self":
      return _scopes.enclosing_class(scope)
    if isinstance(node, ast.Call):
      return self._made(node, scope, depth)
    values = self.values(node, scope, depth)
    if not values:
      return None
    return _agreed([self.class_of(v, s, depth) for v, s in values])

  def values(self, node: ast.AST, scope: _scopes.Scope, depth: int = 0
             ) -> Optional[Values]:
    """The expressions (each with its scope) `node` may hold: a name's
    values or the arguments its call sites pass, an attribute's values
    in its object's class, a dict's entries; None when not known."""
    if isinstance(node, ast.Name):
      return self._name_values(node.id, scope, depth)
    if isinstance(node, ast.Attribute):
      owner = self.class_of(node.value, scope, depth)
      return self._member(owner, node.attr) if owner else None
    if isinstance(node, ast.Subscript):
      held = self._leaves(node.value, scope, depth)
      return _entries(held, node.slice) if held else None
    return None

  def _leaves(self, node: ast.AST, scope: _scopes.Scope, depth: int
              ) -> Optional[Values]:
    """What `node` holds, followed through names and attributes to the
    values made (a dict literal, a call)."""
    held = self.values(node, scope, depth)
    if held is None or depth > _DEPTH:
      return None
    found: Values = []
    for value, home in held:
      inner = self._leaves(value, home, depth + 1) if isinstance(
          value, (ast.Name, ast.Attribute, ast.Subscript)) else None
      found += inner if inner is not None else [(value, home)]
    return found

  def _name_values(self, name: str, scope: _scopes.Scope, depth: int
                   ) -> Optional[Values]:
    place: Optional[_scopes.Scope] = scope
    while place is not None:
      bound = [(d.value, place) for d in place.defs.get(name, ())]
      if name in place.params:
        passed = self._passed(place, name)
        return passed + bound if passed else None
      if bound:
        return bound
      if name in place.classes or name in place.functions:
        return None
      place = place.parent
    return None

  def _member(self, info: _scopes.ClassInfo, name: str) -> Optional[Values]:
    """What `obj.name` holds for an object of class `info`: what a
    property (or a method called without arguments) returns, else what
    the class assigns to `self.name`."""
    method = self.project.method(info, name)
    if method is not None:
      if not _is_property(method.node):
        return None
      return _returned(method)
    return self.project.attribute(info, f"self.{name}") or None

  def _made(self, call: ast.Call, scope: _scopes.Scope, depth: int
            ) -> Optional[_scopes.ClassInfo]:
    """The class a call makes: a project class called, or what a
    function (or a method taking no arguments) of the project returns."""
    func = call.func
    if isinstance(func, ast.Attribute) and not call.args and not (
        call.keywords):
      owner = self.class_of(func.value, scope, depth)
      method = self.project.method(owner, func.attr) if owner else None
      if method is not None and _getter(method.node):
        return _agreed([self.class_of(v, s, depth)
                        for v, s in _returned(method)])
    name = _names.dotted(func)
    target = self.project.resolve(scope, name) if name else None
    if isinstance(target, _scopes.ClassInfo):
      return target
    if not isinstance(target, tuple):
      return None
    node, home = target
    inner = home.scope_of(node)
    if inner is None:
      return None
    returns = getattr(node, "returns", None)
    annotated = _names.dotted(returns) if returns is not None else None
    named = _class_named(self.project.resolve(inner, annotated)) if (
        annotated) else None
    return named or _agreed([self.class_of(v, s, depth)
                             for v, s in _returned(inner)])

  def _passed(self, function: _scopes.Scope, name: str) -> Optional[Values]:
    """The arguments every call site of the project passes for the
    parameter `name` of `function` (a function, or a class's
    `__init__` called through the class); None if one is unknown."""
    node = function.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      return None
    wanted: object = node
    callee = node.name
    if function.cls is not None:
      if node.name != "__init__":
        return None
      wanted, callee = function.cls, function.cls.name
    index = function.params.index(name) - (function.cls is not None)
    found: Values = []
    for caller, call in self._calls(callee):
      spelled = _names.dotted(call.func)
      target = self.project.resolve(caller, spelled) if spelled else None
      if target is not wanted and not (
          isinstance(target, tuple) and target[0] is wanted):
        continue
      passed = _argument(call, name, index)
      if passed is not None:
        found.append((passed, caller))
    return found or None


  def _calls(self, name: str) -> List[Tuple[_scopes.Scope, ast.Call]]:
    """The calls spelled `name` in every module of the project (a file
    that names no sink may call a helper), none for a name too many
    modules write to tell one function's calls from another's."""
    modules = self.project.all_modules_with((name,))
    if len(modules) > _MAX_CALLER_MODULES:
      return []
    return list(self.project.calls_named((name,), modules))


def _argument(call: ast.Call, name: str, index: int) -> Optional[ast.expr]:
  """The value `call` passes for a parameter, by keyword or position."""
  for keyword in call.keywords:
    if keyword.arg == name:
      return keyword.value
  if 0 <= index < len(call.args) and not any(
      isinstance(a, ast.Starred) for a in call.args[:index + 1]):
    return call.args[index]
  return None


def _entries(held: Values, key: ast.AST) -> Optional[Values]:
  """The entries `container[key]` may be: a dict literal's value for a
  literal key (or all its values), and what `container[k] = v` adds."""
  dicts = [(v, s) for v, s in held if isinstance(v, (
      ast.Dict, ast.DictComp)) or (isinstance(v, ast.Call) and (
          _names.dotted(v.func) == "dict"))]
  if not dicts:
    return None
  found: Values = [(v, s) for v, s in held if (v, s) not in dicts]
  literal = isinstance(key, ast.Constant)
  for value, scope in dicts:
    if isinstance(value, ast.DictComp):
      found.append((value.value, scope))
    if not isinstance(value, ast.Dict):
      continue
    keyed = [v for k, v in zip(value.keys, value.values)
             if literal and isinstance(k, ast.Constant) and (
                 k.value == getattr(key, "value", None))]
    found += [(v, scope) for v in keyed or value.values]
  return found


def _returned(method: _scopes.Scope) -> Values:
  return [(n.value, method) for n in method.nodes
          if isinstance(n, ast.Return) and n.value is not None]


def _is_property(node: ast.AST) -> bool:
  """Whether a method is a property (`@property`, `@cached_property`)."""
  return any((_names.dotted(d) or "").split(".")[-1] in {
      "property", "cached_property"} for d in getattr(
          node, "decorator_list", []))


def _getter(node: ast.AST) -> bool:
  """Whether a method takes only `self` (a getter called so)."""
  arguments = getattr(node, "args", None)
  return arguments is not None and len(arguments.args) == 1 and not (
      arguments.vararg or arguments.kwonlyargs)


def _class_named(target: object) -> Optional[_scopes.ClassInfo]:
  return target if isinstance(target, _scopes.ClassInfo) else None


def _agreed(classes: List[Optional[_scopes.ClassInfo]]
            ) -> Optional[_scopes.ClassInfo]:
  """The one class all of `classes` are (none if one is unknown)."""
  first = classes[0] if classes else None
  return first if first is not None and all(
      c is first for c in classes) else None
