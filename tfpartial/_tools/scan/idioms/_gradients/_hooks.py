"""Gradients masked by a hook object: a method of a plug-in (a continual-
learning method, a pruning callback) that returns the gradients it is
given times masks its object keeps (`[g * m for g, m in zip(grads,
self.masks)]`), called through an object the training step holds
(`grads = self.cl_method.adjust_gradients(grads)`) before it applies them.
The flow cannot tell which class the held object is of, so the step never
sees the mask; every method of that name in the project is read. The same
hooks put saved values back right after the step
(`self.cl_method.after_gradient_step(...)`)."""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels


def masked_by_hooks(analysis: Analysis, applies: Iterable[str],
                    skipped: Set[str]
                    ) -> List[Tuple[_scopes.Scope, Labels]]:
  """(method, the labels of what it returns) for each hook method whose
  returned gradients are masked by what its object keeps, called on a
  held object by a function that applies gradients (or by the callers of
  one). `skipped` names methods the caller reads otherwise."""
  flow = analysis.flow
  stepping: Dict[int, _scopes.Scope] = {}
  for scope, _ in analysis.calls_named(applies):
    if analysis.module(scope).is_test:
      continue
    stepping.setdefault(id(scope), scope)
    for place, _ in flow.calls_of(scope.node):
      stepping.setdefault(id(place), place)
  names: Set[str] = set()
  for scope in stepping.values():
    for call in analysis.calls(scope):
      name = _hook_name(call, scope, flow.labels)
      if name and name not in skipped:
        names.add(name)
  found: List[Tuple[_scopes.Scope, Labels]] = []
  for method in analysis.project.functions_named(names) if names \
      else ():
    for node in method.nodes if method.cls is not None else ():
      if isinstance(node, ast.Return) and node.value is not None:
        labels = flow.labels(node.value, method)
        if "masked" in labels and "grad" in labels and _reads_self(method):
          found.append((method, labels))
  return found


def _hook_name(call: ast.Call, scope: _scopes.Scope,
               labels: Callable[[ast.AST, _scopes.Scope], Labels]) -> str:
  """The method's name when `call` calls a method of an object held in an
  attribute (`self.hook.adjust(...)`) and is given gradients."""
  func = call.func
  if not isinstance(func, ast.Attribute) or not isinstance(
      func.value, ast.Attribute) or not isinstance(
          func.value.value, ast.Name) or func.value.value.id != "self":
    return ""  # Checked first: most calls are a module's (`tf.nn.relu`).
  arguments = [*call.args, *(k.value for k in call.keywords)]
  if not any("grad" in labels(a, scope) for a in arguments):
    return ""
  return func.attr


def _reads_self(method: _scopes.Scope) -> bool:
  """Whether the method reads an attribute of its object (the masks the
  hook keeps), not only its arguments."""
  return any(isinstance(n, ast.Attribute) and isinstance(
      n.value, ast.Name) and n.value.id == "self" and isinstance(
          n.ctx, ast.Load) for n in ast.walk(method.node))


def called_after_step(scope: _scopes.Scope, analysis: Analysis,
                      call: ast.Call) -> Optional[Dict[str, object]]:
  """`self.cl_method.after_gradient_step(...)` right after the step: a
  hook method that writes each variable once (in its body, or in loops
  over the variables), called through an object the step holds."""
  order = analysis.order(scope)
  statement = order.parent(call)
  block = order.parent(statement) if statement is not None else None
  while isinstance(block, (ast.For, ast.AsyncFor)):
    block = order.parent(block)
  if scope.cls is None or not isinstance(statement, ast.Expr) or (
      block is not scope.node):
    return None
  flow = analysis.flow
  for place, site in analysis.project.callers(scope.name):
    func = site.func
    if place is scope or not isinstance(func, ast.Attribute) or (
        not isinstance(func.value, ast.Attribute)) or flow.callee(
            site, place) not in (None, scope.node):
      continue
    step = analysis.order(place).step_before(site, place, flow)
    if step is not None:
      return {"order": "after", "at": step}
  return None
