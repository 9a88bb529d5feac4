"""The steps a class inherits from its bases in other modules: an AMP
agent (`class AMPAgent(PPOAgent)`, in a module of its own) trains its
discriminator on the discriminator's loss in `_build_solvers`, after
`super()._build_solvers()` built the actor's and the critic's steps in
the base's module. Read with the module's own steps, the discriminator's
list is one of several losses' lists, each trained (an actor, a critic,
a discriminator), not a part of one model left to train alone. A base's
step counts where the subclass does not override its method, or
overrides it calling `super()`. Part of `var-list-filter`.

And a step of a subclass's override cutting the list its base's same
method trains whole (`cuts_base`): `class Progressive(MAML)` overrides
`_compute_inner_gradients` to pass `var_list=self.model_variables[-4:]`
where `MAML._compute_inner_gradients` passes `self.model_variables`. The
subclass trains, at that step, a part of what the base trains there; a
GAN's or an actor-critic's halves are two steps over two lists, never one
method's list cut by an override."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step


def of_bases(project: _project.Project, steps: List[Step],
             every: List[Step]) -> List[Step]:
  """The steps of `every` (not of `steps`) made in a method that a class
  making one of `steps` inherits from a base of the project."""
  classes: Dict[int, _scopes.ClassInfo] = {}
  for step in steps:
    place = _method_of(step.scope)
    if place is not None:
      classes.setdefault(id(place[0].node), place[0])
  if not classes:
    return []
  mine = {id(step) for step in steps}
  found = []
  for other in every:
    place = _method_of(other.scope) if id(other) not in mine else None
    if place is not None and any(
        place[0] in project.base_classes(info) and _runs(
            project, info, place[0], place[1]) for info in classes.values()):
      found.append(other)
  return found


def _method_of(scope: _scopes.Scope
               ) -> Optional[Tuple[_scopes.ClassInfo, str]]:
  """The class and the name of the method `scope` is (or is in)."""
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  if place is None or place.cls is None:
    return None
  return place.cls, place.name


def _runs(project: _project.Project, info: _scopes.ClassInfo,
          base: _scopes.ClassInfo, name: str) -> bool:
  """Whether `info`'s method `name` runs `base`'s: it is that method, or
  an override calling `super().name(...)`."""
  method = project.method(info, name)
  if method is None or method is base.methods.get(name):
    return method is not None
  return any(isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == name and isinstance(
          node.func.value, ast.Call) and isinstance(
              node.func.value.func, ast.Name) and (
                  node.func.value.func.id == "super")
             for node in ast.walk(method.node))


def cuts_base(project: _project.Project, step: Step) -> bool:
  """Whether `step`'s list is a slice (`x[-4:]`, `x[k:j]`) of the list
  that the overridden method of a base class passes whole to a step of
  the same name (`x`).

  >>> from tfpartial._tools.scan import _files
  >>> text = ("class Base:\\n"
  ...         "  def grads(self, loss):\\n"
  ...         "    return opt.compute_gradients(loss, var_list=self.vs)\\n"
  ...         "class Head(Base):\\n"
  ...         "  def grads(self, loss):\\n"
  ...         "    return opt.compute_gradients(loss, var_list=self.vs[-4:])\\n")
  >>> project = _project.Project([_files.Source("t.py", text)])
  >>> found = project.parsed(project.modules[0])
  >>> scope = found.classes["Head"].methods["grads"]
  >>> call = scope.node.body[0].value
  >>> cuts_base(project, Step(call, scope, call.keywords[0].value, "", {}))
  True
  """
  cut = _sliced(step.var_list)
  scope = step.scope
  if cut is None or scope.cls is None or scope.parent is None or (
      scope.parent.cls is not None):
    return False
  whole = ast.unparse(cut.value)
  name = _names.call_name(step.call)
  for base in project.base_classes(scope.cls):
    method = base.methods.get(scope.name)
    if method is None:
      continue
    return any(isinstance(node, ast.Call) and _names.call_name(
        node) == name and any(ast.unparse(arg) == whole for arg in _lists(
            node)) for node in ast.walk(method.node))
  return False


def _sliced(node: Optional[ast.AST]) -> Optional[ast.Subscript]:
  """`x[a:b]` with a bound, as a step's list; else None."""
  if isinstance(node, ast.Subscript) and isinstance(
      node.slice, ast.Slice) and node.slice.step is None and (
          node.slice.lower is not None or node.slice.upper is not None):
    return node
  return None


def _lists(call: ast.Call) -> List[ast.expr]:
  """What a step call is given as its list: `var_list=`, or the second
  argument (`tf.gradients(loss, xs)`)."""
  found = [k.value for k in call.keywords if k.arg in {
      "var_list", "xs", "sources"}]
  return found + call.args[1:2]
