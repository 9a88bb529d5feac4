"""Whether a step is a subclass's override cutting the list its base's
same method trains whole: `class Progressive(MAML)` overrides
`_compute_inner_gradients` to pass `var_list=self.model_variables[-4:]`
where `MAML._compute_inner_gradients` passes `self.model_variables`. The
subclass trains, at that step, a part of what the base trains there; the
rest of the model stays as it is. A GAN's or an actor-critic's halves
are two steps of one class over two lists, never one method's list cut
by an override. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan._project import Project
from tfpartial._tools.scan.idioms._sources._train_step import Step


def cuts_base(project: Project, step: Step) -> bool:
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
  >>> project = Project([_files.Source("t.py", text)])
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
