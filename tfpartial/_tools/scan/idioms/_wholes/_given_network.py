"""Whether a call runs a network object that a class of the project made
under the scope it was given as it was made (`net =
AutoEncoder('spatial')`, then `net.transform(x)`), where that class
makes every variable inside `with tf.variable_scope(scope)` of what it
was given (or `self.scope` set from it), or in objects of the project's
classes it hands the same name to (`self.encoder = Encoder(sco)`);
its other methods only compute, through plain operations and helpers
of the project that make nothing. Everything such an object makes lies
under its given scope: a filter keeping that scope keeps the whole
network. A class that makes anything elsewhere (a backbone beside the
`with`, a layer in a method run outside it) is not answered here. Part
of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Callable, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _typed

# Whether a call makes no variable (`_own_loss._plain`).
Plain = Callable[[ast.Call], bool]
# TensorFlow's modules of operations: none makes a variable.
_OPERATIONS = {"nn", "math", "image", "linalg", "signal"}
# How deep classes handed the name, and helpers, are followed.
_DEPTH = 3


def runs_kept(typed: _typed.Typed, call: ast.Call, home: _scopes.Scope,
              kept: List[str], plain: Plain) -> bool:
  """Whether `call` (in `home`) runs a method of an object made by a
  project class given, as a literal, a scope `kept` names, that class
  building only under it (`plain`: whether a call makes no variable)."""
  if not isinstance(call.func, ast.Attribute):
    return False
  owner = call.func.value
  info = typed.class_of(owner, home)
  made = typed.values(owner, home) if info is not None else None
  if info is None or not made or len(made) != 1 or not isinstance(
      made[0][0], ast.Call):
    return False
  builds = _Builds(typed, plain)
  return any(_literal(given) in kept and builds.under(info, index, 0)
             for index, given in enumerate(made[0][0].args))


def helper_makes_nothing(typed: _typed.Typed, call: ast.Call,
                         home: _scopes.Scope, plain: Plain) -> bool:
  """Whether `call` calls a helper function of the project (a loss's
  `ssim(a, b)`) that makes no variable, through the helpers it calls."""
  return not isinstance(call.func, ast.Attribute) and _Builds(
      typed, plain)._computes(call, home, set(), 0)


def _literal(node: ast.AST) -> Optional[str]:
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value.strip("/") or None
  return None


class _Builds:
  """Whether classes build only under the name they are given."""

  def __init__(self, typed: _typed.Typed, plain: Plain) -> None:
    self.typed = typed
    self.project: _project.Project = typed.project
    self.plain = plain
    self.seen: Set[int] = set()

  def under(self, info: _scopes.ClassInfo, index: int, depth: int) -> bool:
    """Whether `info`, given its name as the `index`-th argument of its
    construction, makes every variable under that name."""
    init = info.methods.get("__init__")
    if init is None or depth > _DEPTH:
      return False
    arguments = getattr(init.node, "args", None)
    if not isinstance(arguments, ast.arguments):
      return False
    names = [a.arg for a in arguments.args][1:]
    if index >= len(names):
      return False
    given = {names[index]}
    held = {f"self.{t.attr}" for node in init.nodes if isinstance(
        node, ast.Assign) and isinstance(node.value, ast.Name) and (
            node.value.id in given) for t in node.targets if isinstance(
                t, ast.Attribute) and isinstance(t.value, ast.Name) and (
                    t.value.id == "self")}
    key = id(info.node)
    if key in self.seen:
      return True
    self.seen.add(key)
    inside = {m: _inside(method, given | held)
              for m, method in info.methods.items()}
    called_inside = {_method_of(c) for m, method in info.methods.items()
                     for c in method.nodes if isinstance(c, ast.Call) and (
                         _on_self(c)) and id(c) in inside[m]}
    called_outside = {_method_of(c) for m, method in info.methods.items()
                      for c in method.nodes if isinstance(c, ast.Call) and (
                          _on_self(c)) and id(c) not in inside[m]}
    for name, method in info.methods.items():
      if name in called_inside and name not in called_outside:
        continue  # A maker run only under the given scope.
      for node in method.nodes:
        if isinstance(node, ast.Call) and id(node) not in inside[name] and (
            not self._computes(node, method, given | held, depth)):
          return False
    return True

  def _computes(self, call: ast.Call, home: _scopes.Scope,
                given: Set[str], depth: int) -> bool:
    """Whether `call`, outside the given scope, makes no variable: a
    plain operation, a method of the object or of an object it holds
    (checked as classes), a helper of the project making nothing, or
    a class of the project handed the given name."""
    if self.plain(call) or _on_self(call) or _printed(call, home) or (
        _operation(call)):
      return True
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(
        func.value, ast.Attribute) and isinstance(
            func.value.value, ast.Name) and func.value.value.id == "self":
      held = self.typed.class_of(func.value, home)
      return held is not None and id(held.node) in self.seen
    name = _names.dotted(func)
    target = self.project.resolve(home, name) if name else None
    if isinstance(target, _scopes.ClassInfo):
      return any(isinstance(a, ast.Name) and a.id in given or (
          ast.unparse(a) in given) for a in call.args[:1]) and self.under(
              target, 0, depth + 1)
    if isinstance(target, tuple):
      node, place = target
      inner = place.scope_of(node)
      return inner is not None and depth < _DEPTH and all(
          self._computes(c, inner, set(), depth + 1) for c in inner.nodes
          if isinstance(c, ast.Call))
    return False


def _operation(call: ast.Call) -> bool:
  """`tf.nn.conv2d(x, kernel)`: an operation of TensorFlow's modules of
  operations on variables made elsewhere, never a layer."""
  parts = (_names.dotted(call.func) or "").split(".")
  return len(parts) == 3 and parts[0] in {"tf", "tensorflow"} and (
      parts[1] in _OPERATIONS)


def _printed(call: ast.Call, home: _scopes.Scope) -> bool:
  """`print(...)`, `str(x)`: a builtin no module of the project defines."""
  return isinstance(call.func, ast.Name) and call.func.id in {
      "print", "str", "enumerate", "isinstance"} and home.function(
          call.func.id) is None


def _method_of(call: ast.Call) -> str:
  """The method name a call spells (`m` of `self.m(...)`)."""
  return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def _on_self(call: ast.Call) -> bool:
  """`self.m(...)`: a method of the same object."""
  return isinstance(call.func, ast.Attribute) and isinstance(
      call.func.value, ast.Name) and call.func.value.id == "self"


def _inside(method: _scopes.Scope, given: Set[str]) -> Set[int]:
  """The ids of the calls of `method` inside a `with` opening a scope of
  the given name (`with tf.variable_scope(self.scope):`)."""
  found: Set[int] = set()
  for node in method.nodes:
    if isinstance(node, ast.With) and any(
        isinstance(i.context_expr, ast.Call) and _names.call_name(
            i.context_expr) in _names.TF_SCOPES and i.context_expr.args and (
                ast.unparse(i.context_expr.args[0]) in given)
        for i in node.items):
      found |= {id(n) for s in node.body for n in ast.walk(s)
                if isinstance(n, ast.Call)}
  return found
