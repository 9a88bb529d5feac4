"""Whether a filter is one part of a partition that one gradient call
differentiates whole: the call's list is the sum of filters of one
source by one test, kept where it holds and where it does not
(`compute_gradients(loss, net + sbp)`, `net` without 'sbp' and `sbp`
with it), the call's result is sliced into parts, and every part is
applied (two optimizers, one learning rate each); or the two filters
are each the list of a step of their own (`minimize(loss, var_list=
head)` and `minimize(loss, var_list=rest)`). Between them the steps
train every variable of the source: no freeze.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _scheduled
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, var_list_of)

_GRADIENTS = {"compute_gradients", "gradients", "gradient"}
_APPLY = {"apply_gradients", "apply"}


def partitioned(node: ast.AST, home: _scopes.Scope,
                project: _project.Project) -> bool:
  """Whether `node` (a filter bound to a name in `home`, or a slice of a
  gradient call's result) is one part of such a partition, of a source
  that leaves out no variable the project names."""
  facts = _facts(home)
  name = _bound_name(node, facts)
  if _applied_apart(name, home, project, facts):
    return True
  for call, summands in facts.gradients:
    if (name in summands or _slice_of(node, _bound_name(call, facts))) and (
        len(summands) >= 2) and _complementary(summands, home, project) and (
            _parts_applied(call, len(summands), home)):
      return True
  return False


@dataclasses.dataclass
class _Facts:
  """What a scope's steps train and its gradient calls add, and the
  names its values are bound to, read once per scope."""

  trained: Set[str]  # The names of the steps' lists.
  # Each of them bound once to a filter -> its source, test and polarity.
  filters: Dict[str, Tuple[str, str, bool]]
  # Each gradient call of a list and what its list adds, in order.
  gradients: List[Tuple[ast.Call, List[str]]]
  # The id of a value (or of the one argument of a call bound) -> the
  # first name bound to it.
  names: Dict[int, str]


def _facts(home: _scopes.Scope) -> _Facts:
  """The `_Facts` of `home`, read on the first question only."""
  return home.once((partitioned, None, 0), lambda: _read_facts(home))


def _read_facts(home: _scopes.Scope) -> _Facts:
  trained = {chosen.id for call in home.nodes if isinstance(
      call, ast.Call) and _names.call_name(call) in STEPS
             for chosen in [var_list_of(call)] if isinstance(
                 chosen, ast.Name)}
  gradients = [(call, _summands(call.args[1])) for call in home.nodes
               if isinstance(call, ast.Call) and _names.call_name(
                   call) in _GRADIENTS and len(call.args) >= 2]
  names: Dict[int, str] = {}
  for name, defs in home.defs.items():
    for d in defs:
      names.setdefault(id(d.value), name)
      if isinstance(d.value, ast.Call) and d.value.args:
        names.setdefault(id(d.value.args[0]), name)
  filters: Dict[str, Tuple[str, str, bool]] = {}
  for name in trained:
    defs = home.defs.get(name, [])
    found = _filter(defs[0].value) if len(defs) == 1 else None
    if found is not None:
      filters[name] = found
  return _Facts(trained, filters, gradients, names)


def _applied_apart(name: Optional[str], home: _scopes.Scope,
                   project: _project.Project, facts: _Facts) -> bool:
  """Whether the name's filter and the filter of the same source by the
  same test negated, bound to another name, are each the list of a step
  of `home` (`'head' in v.name` and `'head' not in v.name`, one optimizer
  and learning rate each): between them they train the whole source."""
  if name not in facts.trained:
    return False
  mine = facts.filters.get(name)
  others = [n for n, f in facts.filters.items() if mine is not None and (
      f == (mine[0], mine[1], not mine[2]))]
  return mine is not None and bool(others) and _whole_source(
      mine[0], home, project) and not _run_apart(name, others, home)


def _run_apart(name: str, others: List[str], home: _scopes.Scope) -> bool:
  """Whether an ordered test of a loop's counter runs the step of list
  `name` in one part of the run and the steps of `others` in another
  (`_scheduled`: `elif epoch < start + 50: run(train_new)` before
  `else: run(train_rest)`): never trained side by side, so neither
  covers what the other leaves out while it runs."""
  def steps(names: List[str]) -> List[ast.Call]:
    return [call for call in home.nodes if isinstance(call, ast.Call) and (
        _names.call_name(call) in STEPS) for chosen in [var_list_of(call)]
            if isinstance(chosen, ast.Name) and chosen.id in names]
  theirs = steps(others)
  return bool(theirs) and any(_scheduled.chosen_apart(call, home, theirs)
                              for call in steps([name]))


def _slice_of(node: ast.AST, result: Optional[str]) -> bool:
  """Whether `node` is a slice of the name `result` (`grads[:n]`)."""
  return result is not None and isinstance(node, ast.Subscript) and (
      isinstance(node.value, ast.Name)) and node.value.id == result and (
          isinstance(node.slice, ast.Slice))


def _bound_name(node: ast.AST, facts: _Facts) -> Optional[str]:
  """The name `node` is (a name), or is bound to as it is or in
  `list()`."""
  if isinstance(node, ast.Name):
    return node.id
  return facts.names.get(id(node))


def _summands(value: ast.expr) -> List[str]:
  """The names a `+` of names adds (`a + b + c`), else none."""
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    left, right = _summands(value.left), _summands(value.right)
    return left + right if left and right else []
  return [value.id] if isinstance(value, ast.Name) else []


def _complementary(summands: List[str], home: _scopes.Scope,
                   project: _project.Project) -> bool:
  """Whether the names are bound once each to filters of one source by
  one test, both kept where the test holds and where it does not."""
  tests: Set[Tuple[str, str]] = set()
  polarity: Set[bool] = set()
  for name in summands:
    defs = home.defs.get(name, [])
    found = _filter(defs[0].value) if len(defs) == 1 else None
    if found is None:
      return False
    source, test, negated = found
    tests.add((source, test))
    polarity.add(negated)
  return len(tests) == 1 and polarity == {True, False} and _whole_source(
      next(iter(tests))[0], home, project)


def _whole_source(source: str, home: _scopes.Scope,
                  project: _project.Project) -> bool:
  """Whether the partitioned source is no filter, or one by names the
  project writes nowhere else (`'optimizer' not in v.name` where no
  scope is so named): it leaves out no variable of the model."""
  defs = home.defs.get(source, [])
  found = _filter(defs[0].value) if len(defs) == 1 else None
  if found is None:
    return True
  test = ast.parse(found[1], mode="eval")
  words = [n.value for n in ast.walk(test) if isinstance(n, ast.Constant)
           and isinstance(n.value, str) and n.value.isidentifier()]
  # Counted in string literals only: a Python name may share the word.
  return bool(words) and all(sum(len(re.findall(
      rf"""['"][^'"\n]*\b{w}\b[^'"\n]*['"]""", m.source.text,
      re.IGNORECASE)) for m in project.modules) == 1 for w in words)


def _filter(value: ast.expr) -> Optional[Tuple[str, str, bool]]:
  """(source, test without its negation, negated) of `[v for v in src if
  test]` or `filter(lambda v: test, src)` (in `list()` or not)."""
  if isinstance(value, ast.Call) and _names.call_name(value) == "list" and (
      len(value.args) == 1):
    value = value.args[0]
  if isinstance(value, ast.ListComp) and len(value.generators) == 1 and len(
      value.generators[0].ifs) == 1:
    source, test = value.generators[0].iter, value.generators[0].ifs[0]
  elif isinstance(value, ast.Call) and _names.call_name(value) in (
      _names.FILTERS) and len(value.args) == 2 and isinstance(
          value.args[0], ast.Lambda):
    source, test = value.args[1], value.args[0].body
  else:
    return None
  negated = isinstance(value, ast.Call) and _names.call_name(
      value) == "filterfalse"
  if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
    test, negated = test.operand, not negated
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.NotIn):
    test = ast.Compare(test.left, [ast.In()], test.comparators)
    negated = not negated
  return ast.unparse(source), ast.unparse(test), negated


def _parts_applied(call: ast.Call, count: int, home: _scopes.Scope) -> bool:
  """Whether the call's result is bound to a name whose slices (at least
  `count` of them) are each read by an apply in `home`."""
  result = _bound_name(call, _facts(home))
  slices = [name for name, defs in home.defs.items() if any(
      _slice_of(d.value, result) for d in defs)]
  if result is None or len(slices) < count:
    return False
  applied: Set[str] = set()
  for node in home.nodes:
    if isinstance(node, ast.Call) and _names.call_name(
        node) in _APPLY and node.args:
      applied.update(n.id for n in _scopes.made_from(node.args[0], home)
                     if isinstance(n, ast.Name))
  return all(name in applied for name in slices)
