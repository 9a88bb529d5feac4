"""A filtered step fetched by its op's name (`get_operation_by_name(
'fc_train_op')`) and run alone in one arm of a count's test, another op
in the other (DeepPose: only the head's step while `step < fix_conv_iter`,
then the whole): the variables its filter leaves out stay fixed for those
steps. Not a test of parity (two halves taking turns) nor an op run on
every turn. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Iterator, List, Optional

from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes import _swapped

_FETCHES = {"get_operation_by_name", "get_tensor_by_name"}
_COUNTS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def hits(analysis: Analysis, steps: Iterable[Step]) -> List[_idiom.Hit]:
  """Where each filtered step named by `name=` is chosen alone, fetched by
  that name, in an arm of a count's test."""
  named: Dict[str, Step] = {}
  for step in steps:
    name = _op_name(step.call)
    if name and "filtered" in step.labels:
      named.setdefault(name, step)
  if not named:
    return []
  found: List[_idiom.Hit] = []
  project = analysis.project
  for scope, call in project.calls_named(
      _FETCHES, project.all_modules_with(_FETCHES)):
    text = _string(call.args[0]) if call.args else None
    chosen = named.get((text or "").split(":")[0])
    if chosen is None:
      continue
    labels = dict(chosen.labels)
    path = analysis.module(chosen.scope).source.path
    if analysis.module(scope).source.path != path:
      labels[_swapped.STEP_FILE] = ast.Constant(path)
    for node in _alone(scope.node, call, _held_by(scope.node, call)):
      found.append(_idiom.Hit(node, scope, chosen.call, labels))
  return found


def _op_name(call: ast.Call) -> Optional[str]:
  """The constant `name=` of a step's call."""
  for keyword in call.keywords:
    if keyword.arg == "name":
      return _string(keyword.value)
  return None


def _string(node: ast.AST) -> Optional[str]:
  """A string literal's text."""
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value
  return None


def _held_by(function: ast.AST, call: ast.Call) -> Optional[str]:
  """The name the fetched op is assigned to, if any."""
  for node in ast.walk(function):
    if isinstance(node, ast.Assign) and node.value is call and len(
        node.targets) == 1 and isinstance(node.targets[0], ast.Name):
      return node.targets[0].id
  return None


def _reads(nodes: Iterable[ast.AST], call: ast.Call,
           held: Optional[str]) -> Iterator[ast.expr]:
  """The reads of the fetched op in `nodes`: the call, or its name."""
  for root in nodes:
    for node in ast.walk(root):
      if node is call or held is not None and isinstance(
          node, ast.Name) and node.id == held and isinstance(
              node.ctx, ast.Load):
        yield node


def _alone(function: ast.AST, call: ast.Call,
           held: Optional[str]) -> Iterator[ast.expr]:
  """The reads of the op in one arm of a count's test (an `if` or a
  conditional expression) whose other arm, not empty, does not read
  it."""
  for node in ast.walk(function):
    if not isinstance(node, (ast.If, ast.IfExp)) or not _a_count(node.test):
      continue
    body = node.body if isinstance(node.body, list) else [node.body]
    other = node.orelse if isinstance(node.orelse, list) else [node.orelse]
    for arm, rest in ((body, other), (other, body)):
      read = next(_reads(arm, call, held), None)
      if read is not None and rest and next(
          _reads(rest, call, held), None) is None:
        yield read


def _a_count(test: ast.expr) -> bool:
  """`step < fix_conv_iter`: an order of two values, not a parity."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], _COUNTS)) and not any(
          isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
          for n in ast.walk(test))
