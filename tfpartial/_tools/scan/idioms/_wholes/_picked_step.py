"""One of the steps a loop makes per group, picked to run by a value.

`ops = [opt.minimize(loss, var_list=v) for v in var_lists()]` and
`train_op=ops[params["stage"]]`: every group's step minimises the same
loss, and a value chosen at run time (a stage, an epoch, a flag) picks
the one that runs; the groups are stages of one model (a decoder alone,
then the encoder with it), and the stage that runs leaves the rest
fixed. Not a loop whose groups each minimise their own loss (a GAN's
halves, mutual learning, an ensemble), nor steps all run together
(`tf.group(*ops)`: per-layer learning rates).
"""

from __future__ import annotations

import ast
import itertools
from typing import Iterator, Optional, Set, Tuple

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._project import Project
from tfpartial._tools.scan.idioms._sources._train_step import Step, _loss_node

_CALLERS = 8


def picked(project: Project, step: Step) -> bool:
  """Whether `step`, made once per group, minimises a loss that no name
  of its list chooses and is kept in a list that a value indexes (here,
  or where a caller takes the list back)."""
  loss = _loss_node(step.call)
  if loss is None or _counters(step.scope) & {
      n.id for n in ast.walk(loss) if isinstance(n, ast.Name)}:
    return False  # Each group its own loss: a GAN's halves, an ensemble.
  held = _holding(step)
  if held is None:
    return False
  return _indexed(held, step.scope) or any(
      _indexed(name, caller) for name, caller in _taken_back(
          project, held, step))


def _holding(step: Step) -> Optional[str]:
  """The list (or dict) the step's op is kept in: `ops = [... for ...]`,
  `ops = {k: ... for ...}`, or `ops.append(...)`."""
  for node in step.scope.nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Name)) and isinstance(
            node.value, ast.ListComp) and _inside(step.call, node.value):
      return node.targets[0].id
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "append" and (
            isinstance(node.func.value, ast.Name)) and any(
                _inside(step.call, a) for a in node.args):
      return node.func.value.id
  return None


def _inside(call: ast.AST, node: ast.AST) -> bool:
  return any(each is call for each in ast.walk(node))


def _indexed(name: str, scope: _scopes.Scope) -> bool:
  """Whether `scope` reads `name[i]` for an `i` chosen once per run: not
  a number, nor a loop's counter or its parity (`ops[step % 2]`: halves
  taking turns train every group)."""
  counters = _counters(scope)
  return any(isinstance(n, ast.Subscript) and isinstance(
      n.value, ast.Name) and n.value.id == name and not isinstance(
          n.slice, (ast.Constant, ast.Slice)) and not any(
              isinstance(part, ast.BinOp) and isinstance(
                  part.op, ast.Mod) or isinstance(part, ast.Name) and (
                      part.id in counters) for part in ast.walk(n.slice))
             for n in scope.nodes)


def _counters(scope: _scopes.Scope) -> Set[str]:
  """The names the loops of `scope` bind (`for i, v in ...`)."""
  return {t.id for n in scope.nodes if isinstance(n, (
      ast.For, ast.comprehension)) for t in ast.walk(n.target)
          if isinstance(t, ast.Name)}


def _taken_back(project: Project, name: str, step: Step
                ) -> Iterator[Tuple[str, _scopes.Scope]]:
  """Where the function returns the list `name` (alone or in a tuple):
  the name each caller takes it back as, with the caller's scope."""
  place: Optional[Tuple[int, bool]] = None
  for node in step.scope.nodes:
    if isinstance(node, ast.Return) and node.value is not None:
      items = node.value.elts if isinstance(node.value, ast.Tuple) else [
          node.value]
      for index, item in enumerate(items):
        if isinstance(item, ast.Name) and item.id == name:
          place = (index, isinstance(node.value, ast.Tuple))
  called = getattr(step.scope.node, "name", None)
  if place is None or not isinstance(called, str):
    return
  # Callers in any module: an Estimator's `model_fn` that picks the op
  # names no step itself.
  calls = project.calls_named((called,), project.all_modules_with(
      (called,)))
  for scope, call in itertools.islice(calls, _CALLERS):
    for node in scope.nodes:
      if isinstance(node, ast.Assign) and node.value is call and len(
          node.targets) == 1:
        target = node.targets[0]
        if place[1] and isinstance(target, ast.Tuple) and len(
            target.elts) > place[0]:
          target = target.elts[place[0]]
        if isinstance(target, ast.Name):
          yield target.id, scope
