"""A two-stage model whose second stage refines the first's output, the
first stage trained only before a bound of the loop's counter (PG2's
pose-guided generator: `G1, DiffMap, self.G_var1, self.G_var2 =
Generator(x, pose)`, `G2 = G1 + DiffMap`; `g_optim1` over `G_var1` run
while `step < 22000`, then only `g_optim2` over `G_var2` and the
discriminator's step): from the bound on, the first stage, whose output
is a term of the second's, stays fixed though the loss still reaches it.

What the code does decides: one call makes both stages (their outputs and
their variable lists), the second stage's output is the first's plus its
own (a residual refinement, not a teacher's output that a loss compares
against), the loop's counter picks the first stage's op before the bound
and the second's after it, and no op that may run from the bound on
trains the first stage's list. Part of `var-list-filter`."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, Step, _class_of, _loss_node, var_list_of)

# The label of a finding's read of the second stage's op.
REFINED = "refined"
# Searches bounded: statements of one method read for what a value feeds.
_BOUND = 400


@dataclasses.dataclass
class _Step:
  """A step call as this rule reads it, wrapped by a method or not."""

  call: ast.Call
  scope: _scopes.Scope
  var_list: Optional[ast.AST]


def hits(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """The second stage's op of each such model, once: in the classes the
  steps are built in, every step call of their methods (a method that
  builds several steps from its parameters is read call by call)."""
  classes = {id(info): info for step in steps
             for info in [_class_of(step.scope)] if info is not None}
  found: List[_idiom.Hit] = []
  for info in classes.values():
    group = [_Step(call, method, chosen)
             for method in info.methods.values()
             for call in analysis.calls(method)
             if _names.call_name(call) in STEPS
             for chosen in [var_list_of(call)]
             if chosen is not None and _loss_node(call) is not None]
    if len(group) > 1:
      found += _in_class(info, group)
  return found


def _in_class(info: _scopes.ClassInfo, group: List[_Step]
              ) -> List[_idiom.Hit]:
  """At the loop's read of each second stage's op, once."""
  ranges: Dict[int, List[Tuple[Set[str], Set[str]]]] = {
      id(method): list(_chosen_stage._ranges(method.node))
      for method in info.methods.values()}
  every = [pair for found in ranges.values() for pair in found]
  if not every:
    return []
  kept: Dict[int, Dict[int, ast.Assign]] = {}  # Read once a function.
  ops = {id(step.call): _op_of(info, step, kept) for step in group}
  picked = {name for pair in every for arm in pair for name in arm}
  # Only the steps whose ops a counter's test picks pair up.
  chosen = [step for step in group if ops[id(step.call)] in picked]
  found: Dict[int, _idiom.Hit] = {}
  for first in chosen:
    for second in chosen:
      mine = ops[id(second.call)]
      if first is second or mine is None or not _later(
          mine, ops[id(first.call)], every) or not _refines(
              info, first, second, group, ops, every):
        continue
      read = _read_later(info, mine, ranges)
      if read is not None and id(read[0]) not in found:
        found[id(read[0])] = _idiom.Hit(read[0], read[1], second.call,
                                     {"filtered": read[0], REFINED: read[0]})
  return list(found.values())


def _read_later(info: _scopes.ClassInfo, op: str,
                ranges: Dict[int, List[Tuple[Set[str], Set[str]]]]
                ) -> Optional[Tuple[ast.expr, _scopes.Scope]]:
  """The first read of `op` in a method whose counter's test picks it
  from the bound on (`self.sess.run(self.g_optim2)`)."""
  for method in info.methods.values():
    if any(op in after for _, after in ranges[id(method)]):
      for node in _scopes.walk(method.node):
        if isinstance(node, ast.Attribute) and isinstance(
            node.ctx, ast.Load) and _names.dotted(node) == op:
          return node, method
  return None


def _later(mine: Optional[str], theirs: Optional[str],
           ranges: List[Tuple[Set[str], Set[str]]]) -> bool:
  """Whether a counter's test picks `theirs` before its bound and `mine`
  from it on, each in one arm only."""
  return mine is not None and theirs is not None and mine != theirs and any(
      theirs in before and mine in after and not (
          mine in before or theirs in after) for before, after in ranges)


def _op_of(info: _scopes.ClassInfo, step: _Step,
           kept: Dict[int, Dict[int, ast.Assign]]) -> Optional[str]:
  """The `self.` attribute the step's op is kept in: assigned there, or
  returned by its method in a tuple that a method of the class unpacks
  into attributes (`self.g_optim1, ... = self._getOptimizer(...)`)."""
  if id(step.scope) not in kept:
    kept[id(step.scope)] = {
        id(each): node for node in step.scope.nodes
        if isinstance(node, ast.Assign) and len(node.targets) == 1
        for each in ast.walk(node.value) if isinstance(each, ast.Call)}
  node = kept[id(step.scope)].get(id(step.call))
  if node is None:
    return None
  name = _names.dotted(node.targets[0])
  if name is not None and name.startswith("self."):
    return name
  if isinstance(node.targets[0], ast.Name):
    return _unpacked(info, step.scope, node.targets[0].id)
  return None


def _unpacked(info: _scopes.ClassInfo, scope: _scopes.Scope, local: str
              ) -> Optional[str]:
  """The attribute a caller in the class unpacks the method's returned
  `local` into."""
  returned = [node.value for node in scope.nodes
              if isinstance(node, ast.Return) and isinstance(
                  node.value, ast.Tuple)]
  if len(returned) != 1:
    return None
  names = [_names.dotted(e) for e in returned[0].elts]
  if names.count(local) != 1:
    return None
  index = names.index(local)
  for call, target in _unpackings(info, scope.name):
    if len(target.elts) == len(names):
      name = _names.dotted(target.elts[index])
      if name is not None and name.startswith("self."):
        return name
  return None


def _unpackings(info: _scopes.ClassInfo, method: str
                ) -> Iterator[Tuple[ast.Call, ast.Tuple]]:
  """The calls `self.<method>(...)` of the class unpacked into a tuple."""
  for scope in info.methods.values():
    for node in scope.nodes:
      if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
          isinstance(node.targets[0], ast.Tuple)) and isinstance(
              node.value, ast.Call) and _names.dotted(
                  node.value.func) == f"self.{method}":
        yield node.value, node.targets[0]


def _outer(info: _scopes.ClassInfo, step: _Step, node: Optional[ast.AST]
           ) -> Optional[str]:
  """`node` (the step's list or loss) as the method that builds the
  model names it: a parameter of the step's method given by its caller
  in the class, else as written."""
  if node is None:
    return None
  name = _names.dotted(node)
  if not isinstance(node, ast.Name) or name not in step.scope.params:
    return name
  params = [p for p in step.scope.params if p != "self"]
  if name not in params:
    return None
  for call, _ in _unpackings(info, step.scope.name):
    index = params.index(name)
    if index < len(call.args):
      return _names.dotted(call.args[index])
    for keyword in call.keywords:
      if keyword.arg == name:
        return _names.dotted(keyword.value)
  return None


def _refines(info: _scopes.ClassInfo, first: _Step, second: _Step,
             group: List[_Step], ops: Dict[int, Optional[str]],
             ranges: List[Tuple[Set[str], Set[str]]]) -> bool:
  """Whether one call makes both stages, the second's output adds to the
  first's, the second's loss reaches that sum, and no op that may run
  from the bound on trains the first's list."""
  lists = {id(s.call): _outer(info, s, s.var_list) for s in group}
  mine, theirs = lists[id(second.call)], lists[id(first.call)]
  loss = _outer(info, second, _loss_node(second.call))
  if mine is None or theirs is None or loss is None or mine == theirs:
    return False
  for scope in info.methods.values():
    made = _made_together(scope, mine, theirs, set(lists.values()) - {None})
    if made is not None and _sum_reaches(scope, made[0], made[1], loss):
      break
  else:
    return False
  # No op that may run from the bound on trains the first stage's list.
  first_op = ops[id(first.call)]
  return not any(other is not first and (
      ops[id(other.call)] is None or ops[id(other.call)] != first_op) and (
          lists[id(other.call)] is None
          or theirs in (lists[id(other.call)] or "")) and not _before_only(
              ops[id(other.call)], ranges) for other in group)


def _before_only(op: Optional[str],
                 ranges: List[Tuple[Set[str], Set[str]]]) -> bool:
  """Whether a counter's test picks the op before its bound only."""
  return op is not None and any(op in before and op not in after
                                for before, after in ranges)


def _made_together(scope: _scopes.Scope, mine: str, theirs: str,
                   lists: Set[Optional[str]]
                   ) -> Optional[Tuple[Set[str], Set[str]]]:
  """The two outputs one call returns beside both lists (`G1, DiffMap,
  self.G_var1, self.G_var2 = Generator(...)`), in the lists' order: (the
  first stage's, the second's)."""
  for node in scope.nodes:
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not (
        isinstance(node.targets[0], ast.Tuple)) or not isinstance(
            node.value, ast.Call):
      continue
    names = [_names.dotted(e) for e in node.targets[0].elts]
    if mine not in names or theirs not in names:
      continue
    outputs = [n for n in names if n is not None and n not in lists]
    if len(outputs) == 2 and names.index(theirs) < names.index(mine):
      return {outputs[0]}, {outputs[1]}
  return None


def _sum_reaches(scope: _scopes.Scope, first: Set[str], second: Set[str],
                 loss: str) -> bool:
  """Whether a name is assigned the first output plus the second
  (`G2 = G1 + DiffMap`), and the loss is computed from that sum."""
  fed: Set[str] = set()
  nodes = sorted((n for n in scope.nodes if isinstance(
      n, (ast.Assign, ast.AugAssign))), key=_idiom.position)
  for node in nodes[:_BOUND]:
    value = node.value
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    read = {_names.dotted(n) for n in ast.walk(value)
            if isinstance(n, (ast.Name, ast.Attribute))} - {"self", None}
    summed = isinstance(value, ast.BinOp) and isinstance(
        value.op, ast.Add) and {_names.dotted(value.left),
                                _names.dotted(value.right)} == (
                                    first | second)
    if summed or read & fed:
      for target in targets:
        elements = target.elts if isinstance(
            target, (ast.Tuple, ast.List)) else [target]
        fed.update(name for name in map(_names.dotted, elements)
                   if name is not None)
  return loss in fed
