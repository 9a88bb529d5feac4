"""An asynchronous actor-critic's (A3C) workers: each takes gradients on
its local copy of the network and applies them to the global copy's
variables, which all train. Part of `var-list-filter`'s gates.

Two things the code does tell such a list from a part of a model:

- The network's class (or helper) opens the scope it is handed and
  builds the worker's step only when that scope is not a literal (`if
  scope != 'global':`): the literal is the scope of a whole instance,
  the global network, wherever (or whether) the project builds it.
- The worker keeps the global variables whose names match those of the
  gradients it applies (`[v for v in global_net.get_vars() if name(v)
  in grad_names]`, `grad_names` made from those very gradients) and the
  gradients are taken over a list no filter of the worker narrows (the
  local network's whole list): the list pairs each gradient with its
  variable and chooses none.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from typing import Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import lines_of

# What builds a step: the worker's half of the class.
_STEPS = {"apply_gradients", "minimize", "gradients", "compute_gradients"}


def guarded_scopes(project: _project.Project) -> Set[str]:
  """The literals a function or class of the project tests the scope it
  opens from a parameter against, around a step it builds only for the
  other scopes (`if scope != 'global':` around `apply_gradients`).

  >>> sorted(_tested(ast.parse(
  ...     "def __init__(self, scope):\\n"
  ...     "  with tf.variable_scope(scope):\\n"
  ...     "    if scope != 'global':\\n"
  ...     "      op = opt.apply_gradients(zip(g, v))\\n").body[0]))
  ['global']
  """
  found: Set[str] = set()
  for module in project.modules:
    text = module.source.text
    if "_scope(" not in text or "!=" not in text and "==" not in text or (
        not project.parsed(module)) or module.tree is None:
      continue
    opening = module.lines_of(_names.TF_SCOPES)
    testing = _lines_testing(text)
    for node in _scopes.walk(module.tree):
      if isinstance(node, ast.FunctionDef) and _within(
          opening, node) and _within(testing, node):
        found |= _tested(node)
  return found


def _lines_testing(text: str) -> List[int]:
  """The lines (from 1, in order) where `==` or `!=` is written."""
  ends = list(itertools.accumulate(len(line) for line in lines_of(text)))
  return sorted({bisect.bisect_right(ends, m.start()) + 1
                 for m in _TESTS.finditer(text)})


_TESTS = re.compile(r"[=!]=")


def _within(lines: List[int], function: ast.FunctionDef) -> bool:
  """Whether one of `lines` (in order) is in the function's text: a
  function without a scope call or without a test of equality tests no
  scope it opens (its walk is not read for it)."""
  index = bisect.bisect_left(lines, function.lineno)
  return index < len(lines) and lines[index] <= (
      function.end_lineno or function.lineno)


def _tested(function: ast.FunctionDef) -> Set[str]:
  """The literals `function` tests its opened scope against (`_STEPS`
  built only on the other side of the test)."""
  opened = _opened_scopes.parameter(function, outermost=False)
  found: Set[str] = set()
  if opened is None:
    return found
  for node in _scopes.walk(function):
    if not isinstance(node, ast.If):
      continue
    for literal, built in ((_excluded(node.test, opened), node.body),
                           (_implied(node.test, opened), node.orelse)):
      if literal is not None and any(_builds_step(s) for s in built):
        found.add(literal)
  return found


def _excluded(test: ast.expr, name: str) -> Optional[str]:
  """The literal `name` is never equal to where `test` holds: `name !=
  'global'`, alone or as a conjunct (`scope != 'global' and not play`),
  or the negation of a test that holds wherever `name` is the literal.

  >>> _excluded(ast.parse("s != 'g' and not play").body[0].value, "s")
  'g'
  >>> _excluded(ast.parse("not (s == 'g' and play)").body[0].value, "s")
  """
  if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
    return next((found for found in (_excluded(v, name) for v in test.values)
                 if found is not None), None)
  if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
    return _implied(test.operand, name)
  literal, op = _compared(test, name)
  return literal if isinstance(op, ast.NotEq) else None


def _implied(test: ast.expr, name: str) -> Optional[str]:
  """The literal whose value of `name` makes `test` hold: `name ==
  'global'`, alone or as a disjunct (`scope == 'global' or play`), or
  the negation of a test that excludes it; the other arm of the `if` is
  built only for the other scopes."""
  if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
    return next((found for found in (_implied(v, name) for v in test.values)
                 if found is not None), None)
  if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
    return _excluded(test.operand, name)
  literal, op = _compared(test, name)
  return literal if isinstance(op, ast.Eq) else None


def _compared(test: ast.expr, name: str
              ) -> Tuple[Optional[str], Optional[ast.cmpop]]:
  """(literal, operator) of `name != 'literal'` (either side), or Nones."""
  if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not (
      isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
    return None, None
  sides = [test.left, test.comparators[0]]
  if any(isinstance(s, ast.Name) and s.id == name for s in sides):
    for side in sides:
      if isinstance(side, ast.Constant) and isinstance(
          side.value, str) and side.value:
        return side.value, test.ops[0]
  return None, None


def _builds_step(statement: ast.stmt) -> bool:
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _STEPS
             for n in ast.walk(statement))


def paired(step_call: ast.Call, function: ast.AST,
           node: Optional[ast.AST]) -> bool:
  """Whether the filter `node` of a step's list keeps the variables
  whose names match the gradients the step applies: a comprehension
  whose test is `f(v) in names`, `names` made (in the step's function)
  in the step's `function` by a comprehension over an argument of the
  step, while no other call of `function` is given a filtered list (the
  gradients taken over part of the local network).

  >>> tree = ast.parse(
  ...     "def f(self, net, applier):\\n"
  ...     "  names = [n(x) for x in self.grads()]\\n"
  ...     "  vs = [v for v in net.get_vars() if n(v) in names]\\n"
  ...     "  op = applier.apply_gradients(vs, self.grads())\\n")
  >>> function = tree.body[0]
  >>> paired(function.body[2].value, function, function.body[1].value)
  True
  """
  if not isinstance(node, ast.ListComp) or len(node.generators) != 1:
    return False
  applied = {ast.dump(a) for a in step_call.args} | {
      ast.dump(k.value) for k in step_call.keywords}
  return any(ast.dump(made) in applied for made in _matched_names(
      node.generators[0].ifs, function)) and not _narrowed_elsewhere(
          step_call, function)


def _narrowed_elsewhere(step_call: ast.Call, function: ast.AST) -> bool:
  """Whether a call of `function` other than the step is given a
  comprehension with a test, or a name `function` binds to one
  (`prepare_minimize(loss, [v for v in local.get_vars() if 'W' in
  v.name])`)."""
  filtered = {statement.targets[0].id for statement in ast.walk(function)
              if isinstance(statement, ast.Assign) and len(
                  statement.targets) == 1 and isinstance(
                      statement.targets[0], ast.Name) and _filters(
                          statement.value)}
  for call in ast.walk(function):
    if not isinstance(call, ast.Call) or call is step_call:
      continue
    for given in [*call.args, *(k.value for k in call.keywords)]:
      if _filters(given) or isinstance(given, ast.Name) and (
          given.id in filtered):
        return True
  return False


def _filters(node: ast.AST) -> bool:
  return isinstance(node, ast.ListComp) and any(
      g.ifs for g in node.generators)


def _matched_names(tests: List[ast.expr], function: ast.AST
                   ) -> Iterator[ast.expr]:
  """What the names a test matches against (`f(v) in names`) are made
  from, for each `names` bound in `function` to a comprehension."""
  for test in tests:
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not (
        isinstance(test.ops[0], ast.In)) or not isinstance(
            test.comparators[0], ast.Name):
      continue
    name = test.comparators[0].id
    for statement in ast.walk(function):
      if isinstance(statement, ast.Assign) and len(
          statement.targets) == 1 and isinstance(
              statement.targets[0], ast.Name) and (
                  statement.targets[0].id == name) and isinstance(
                      statement.value, ast.ListComp) and len(
                          statement.value.generators) == 1:
        yield statement.value.generators[0].iter

