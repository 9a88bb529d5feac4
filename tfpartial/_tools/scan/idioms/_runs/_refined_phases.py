"""When the refined-stage rule (`_refined_stage`) reads a class's ops as
run: which `self.` ops are read only inside the before-bound arms of
counter tests, the earliest read of each op in each arm, and whether an
op read elsewhere is made by a call that may build a step the rule does
not see (a helper of the project, nested or imported), each read once."""

from __future__ import annotations

import ast
import builtins
from typing import Dict, List, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import STEPS

# How deep a call is followed into the project's functions for a step.
_DEPTH = 3


class Phases:
  """A class's reads of its `self.` attributes, by phase.

  Attributes:
    arms: Per arm (0 before the bound, 1 from it on), op -> its earliest
      read in such an arm, with the method (methods in order).
    before_only: The attributes read in a before-arm and nowhere else.
    elsewhere: The attributes read outside every before-arm.
    locals: The local names read outside the before-arms of a method
      testing its loop's counter, with the method.
  """

  def __init__(self, info: _scopes.ClassInfo):
    self.arms: Tuple[Dict[str, Tuple[ast.expr, _scopes.Scope]], ...] = (
        {}, {})
    inside: Set[int] = set()
    tested: List[_scopes.Scope] = []
    for method in info.methods.values():
      for test, before in _chosen_stage.range_tests(method.node):
        tested.append(method)
        arms = (test.body, test.orelse) if before else (test.orelse,
                                                        test.body)
        for arm, statements in enumerate(arms):
          found = [node for statement in statements
                   for node in ast.walk(statement)
                   if isinstance(node, ast.Attribute) and _read(node)]
          if arm == 0:
            inside |= {id(node) for node in found}
          for node in sorted(found, key=_idiom.position):
            name = _names.dotted(node)
            assert name is not None
            self.arms[arm].setdefault(name, (node, method))
    self.elsewhere: Set[str] = set()
    seen: Set[str] = set()
    for each in ast.walk(info.node):
      if _read(each):
        name = _names.dotted(each)
        assert name is not None
        (seen if id(each) in inside else self.elsewhere).add(name)
    self.before_only = seen - self.elsewhere
    # The local names read outside the before-arms of a method testing
    # its loop's counter (`op = make_op(loss)` run from the bound on).
    self.locals = [(each, method) for method in {
        id(m): m for m in tested}.values() for each in ast.walk(method.node)
                   if isinstance(each, ast.Name) and isinstance(
                       each.ctx, ast.Load) and id(each) not in inside]


def _read(node: ast.AST) -> bool:
  return isinstance(node, ast.Attribute) and isinstance(
      node.ctx, ast.Load) and (_names.dotted(node) or "").startswith("self.")


def hidden(analysis: Analysis, info: _scopes.ClassInfo, phases: Phases,
           known: Set[str]) -> bool:
  """Whether an op read outside the before-arms (`self.g_ft =
  make_op(loss)`) other than the `known` ones is made by a call that may
  build a step: a project function holding one, or a call not resolved."""
  seen: Dict[int, bool] = {}
  values = [pair for name in phases.elsewhere - known if name.count(
      ".") == 1 for pair in info.attributes.get(name, [])] + [
          (value, method) for node, method in phases.locals
          for value in _scopes.values_reaching(node, method)
          if value is not node]
  done: Set[int] = set()
  for value, scope in values:
    if id(value) in done:
      continue
    done.add(id(value))
    for call in ast.walk(value):
      # A session's `run` runs ops; it makes none.
      if isinstance(call, ast.Call) and _names.call_name(
          call) not in STEPS and not (_names.dotted(call.func) or "").endswith(
              ".run") and _may_step(analysis, info, scope, call, _DEPTH,
                                    seen):
        return True
  return False


def _may_step(analysis: Analysis, info: _scopes.ClassInfo,
              scope: _scopes.Scope, call: ast.Call, depth: int,
              seen: Dict[int, bool]) -> bool:
  """Whether `call` may build a step: its function (a method, a project
  function) holds a step call or such a call, followed `depth` deep."""
  name = _names.dotted(call.func)
  if name is None:
    return True
  first, _, rest = name.partition(".")
  bodies: List[Tuple[ast.AST, _scopes.Scope]] = []
  if first == "self":
    method = info.methods.get(rest)
    if method is None:  # A callable kept in an attribute: not read.
      return True
    bodies = [(method.node, method)]
  else:
    target = analysis.project.resolve(scope, name)
    if target is None:
      module = scope.module
      imported = first in getattr(module, "imports", {})
      return not (imported or hasattr(builtins, first))
    if isinstance(target, tuple):
      bodies = [(target[0], target[1].scope_of(target[0]) or target[1])]
    elif isinstance(target, _scopes.ClassInfo):
      bodies = [(m.node, m) for m in target.methods.values()]
  for body, where in bodies:
    if id(body) not in seen:
      seen[id(body)] = False
      calls = [n for n in ast.walk(body) if isinstance(n, ast.Call)]
      seen[id(body)] = any(_names.call_name(n) in STEPS for n in calls) or (
          depth > 1 and any(_may_step(analysis, info, where, n, depth - 1,
                                      seen) for n in calls))
    if seen[id(body)]:
      return True
  return False
