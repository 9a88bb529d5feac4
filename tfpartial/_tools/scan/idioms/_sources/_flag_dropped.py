"""A part of a step's own list that a flag of the function building the
list drops (zi2zi's `retrieve_trainable_vars(freeze_encoder)`: `if
freeze_encoder: g_vars = [v for v in g_vars if "g_e" not in v.name]`;
its forks' `if freeze_decoder == 0: gen_vars.extend(dec_vars)`), and a
caller passes that flag a value that may be set: while it is, the step
trains part of the group it trains otherwise. What the code does, not
who trains beside it: a GAN's generator so narrowed leaves part of the
generator fixed, whatever its discriminator trains; a flag that swaps
one whole list for another (CycleGAN's one generator or both), or an
`if` on anything but the function's flag, is no such drop. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources import _narrowed_arm
from tfpartial._tools.scan.idioms._sources._train_step import (
    Step, _class_of)


def hits(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """One finding per list a flag drops a part of, at the first narrowing
  filter or test of a flag that adds a part (each step's list once)."""
  found: List[_idiom.Hit] = []
  seen = set()
  for step in steps:
    built = _built(analysis, step)
    if built is None:
      continue
    home, name = built
    node = next(_drops(analysis, home, name), None)
    if node is not None and id(node) not in seen:
      seen.add(id(node))
      found.append(_idiom.Hit(node, home, step.call, {"filtered": node}))
  return found


def _built(analysis: Analysis, step: Step
           ) -> Optional[Tuple[_scopes.Scope, str]]:
  """(the function, the local name) the step's list is built as: its own
  local name, or the element of a tuple that a function of the project
  returns (`g_vars, d_vars = self.retrieve_trainable_vars(...)`)."""
  if not isinstance(step.var_list, ast.Name):
    return None
  name = step.var_list.id
  defs = step.scope.defs.get(name, [])
  # The same call again (a tower loop per step) is one list.
  if not defs or not all(isinstance(d.value, ast.Call) and d.part == (
      defs[0].part) and ast.unparse(d.value) == ast.unparse(defs[0].value)
                         for d in defs):
    return (step.scope, name) if defs else None
  made, call = defs[0], defs[0].value
  assert isinstance(call, ast.Call)
  callee = _callee(analysis, call, step.scope)
  if callee is None or made.part is None:
    return (step.scope, name)
  index, size = made.part
  returned = [node.value.elts[index] for node in _returns(callee.node)
              if isinstance(node.value, ast.Tuple) and (
                  len(node.value.elts) == size)]
  if len(returned) != 1 or not isinstance(returned[0], ast.Name):
    return None
  return callee, returned[0].id


def _callee(analysis: Analysis, call: ast.Call, scope: _scopes.Scope
            ) -> Optional[_scopes.Scope]:
  """The scope of the method of the step's own object (`self.m(...)`) or
  of the function of an enclosing scope that `call` calls."""
  func = call.func
  if isinstance(func, ast.Attribute) and _names.dotted(func.value) == "self":
    info = _class_of(scope)
    return analysis.project.method(info, func.attr) if info else None
  if isinstance(func, ast.Name):
    outer: Optional[_scopes.Scope] = scope
    while outer is not None:
      node = outer.functions.get(func.id)
      if node is not None:
        return outer.scopes.get(id(node))
      outer = outer.parent
  return None


def _returns(node: ast.AST) -> Iterator[ast.Return]:
  """The `return`s of a function, not of the functions inside it."""
  for each in ast.iter_child_nodes(node):
    if isinstance(each, ast.Return) and each.value is not None:
      yield each
    elif not isinstance(each, (ast.FunctionDef, ast.AsyncFunctionDef,
                               ast.ClassDef, ast.Lambda)):
      yield from _returns(each)


def _drops(analysis: Analysis, home: _scopes.Scope, name: str
           ) -> Iterator[ast.expr]:
  """The filters a set flag of `home` narrows the list `name` with, and
  the tests of a flag, set, under which a filtered part is not added."""
  defs = home.defs.get(name, [])
  # Parts added apart from each other: one dropped leaves the others.
  parts = sum(not each.replaces for each in defs) + sum(
      each.replaces and isinstance(each.value, ast.ListComp) for each in defs)
  for each in defs:
    test = each.where.guard or each.where.test
    flag = _flag(test, home)
    if flag is None or not _narrowed_arm._set_by_a_caller(
        analysis, home, flag[0]):
      continue
    value = each.value
    if each.replaces and flag[1] and _self_narrowed(value, name) and any(
        other.replaces and other.where.guard is None and (
            other.where.test is None) and other.end <= each.start
        for other in defs):
      yield value
    elif not each.replaces and not flag[1] and parts > 1 and isinstance(
        value, ast.Name) and _a_filter(home, value.id):
      assert test is not None
      yield test


def _flag(test: Optional[ast.expr], home: _scopes.Scope
          ) -> Optional[Tuple[str, bool]]:
  """(the parameter, whether the block runs with it set) of an `if` on
  a parameter of `home` alone: `if freeze:`, `if not freeze:`, `if
  freeze == 0:`, `if freeze == False:`."""
  if isinstance(test, ast.Name) and test.id in home.params:
    return test.id, True
  if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and (
      isinstance(test.operand, ast.Name)) and test.operand.id in home.params:
    return test.operand.id, False
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.left, ast.Name) and test.left.id in home.params and isinstance(
          test.ops[0], (ast.Eq, ast.Is)) and isinstance(
              test.comparators[0], ast.Constant) and (
                  test.comparators[0].value in (0, False)):
    return test.left.id, False
  return None


def _self_narrowed(value: ast.expr, name: str) -> bool:
  """Whether `value` keeps, by a test of their names, some of the list
  `name` itself (`[v for v in g_vars if "g_e" not in v.name]`)."""
  return isinstance(value, (ast.ListComp, ast.GeneratorExp)) and (
      len(value.generators) == 1) and isinstance(
          value.generators[0].iter, ast.Name) and (
              value.generators[0].iter.id == name) and any(
                  _names.mentions_a_name_test(test)
                  for test in value.generators[0].ifs)


def _a_filter(home: _scopes.Scope, name: str) -> bool:
  """Whether the local `name` is variables kept by their names, once."""
  defs = home.defs.get(name, [])
  return len(defs) == 1 and isinstance(defs[0].value, (
      ast.ListComp, ast.GeneratorExp)) and any(
          _names.mentions_a_name_test(test)
          for gen in defs[0].value.generators for test in gen.ifs)
