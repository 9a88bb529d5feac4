"""Which steps a scan finds and the list each receives: by keyword, inside
a call, through a parameter, an owner or a wrapper, and the steps one loop
or helper groups."""

from __future__ import annotations

import ast
import itertools
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _base_calls
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms._runs import _dropped
from tfpartial._tools.scan.idioms._runs import _fetched_out
from tfpartial._tools.scan.idioms._runs import _graphs
from tfpartial._tools.scan.idioms._runs import _squared
from tfpartial._tools.scan.idioms._sources import _filled
from tfpartial._tools.scan.idioms._sources import _hand_picked
from tfpartial._tools.scan.idioms._sources import _keyed
from tfpartial._tools.scan.idioms._sources import _kept_lists
from tfpartial._tools.scan.idioms._sources import _outside
from tfpartial._tools.scan.idioms._sources import _overridden
from tfpartial._tools.scan.idioms._sources import _newest_part
from tfpartial._tools.scan.idioms._sources import _own_subset
from tfpartial._tools.scan.idioms._sources import _selecting
from tfpartial._tools.scan.idioms._sources._hand_made import (
    _hand_made, _run_beside, _some_entries)
from tfpartial._tools.scan.idioms._sources._origins import _returned_filters
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, Step, _loss_key, _loss_of, var_list_of)
from tfpartial._tools.scan.idioms._sources import _groups


def _applies_nothing(call: ast.Call, scope: _scopes.Scope,
                     analysis: Analysis) -> bool:
  """Whether `call`'s gradients are never applied: read by nothing or
  only printed, only squared (a Fisher), or only fetched out of the
  graph as numbers; or
  its train op is fetched by nothing."""
  return _dropped.unread_gradients(call, scope, analysis) or (
      _dropped.printed_gradients(call, scope, analysis)) or (
      _dropped.unfetched_op(call, scope, analysis)) or (
      _squared.only_squared(call, scope, analysis)) or (
          _fetched_out.only_fetched(call, scope, analysis))


def _steps(analysis: Analysis) -> List[Step]:
  """Every step outside the project's tests, with what it trains; a
  function of the project that only passes its parameters on to a step
  (`flatgrad(loss, var_list)`) is a step where it is called; so is a
  call of a helper outside the scanned code given `trainable_variables=`
  (`_outside`)."""
  flow = analysis.flow
  wrappers: Dict[int, Tuple[int, int]] = {}  # function -> (loss, vars).
  inner: Dict[int, Tuple[ast.Call, object]] = {}  # -> (step, its module).
  owners: Dict[str, List[_scopes.Scope]] = {}  # Wrappers, by name.
  created: Dict[int, Set[str]] = {}  # A function -> its parameters.
  found: List[Step] = []
  seen: Set[int] = set()
  for scope, call in itertools.chain(analysis.calls_named(STEPS),
                                     _outside.calls(analysis)):
    seen.add(id(call))
    if analysis.module(scope).is_test or _applies_nothing(
        call, scope, analysis):
      continue  # A test's, or gradients nothing applies: no step.
    chosen = var_list_of(call)
    given = _read_of_parameter(chosen, scope)
    owner = _owner(given, scope)
    passed = _passed_on(call, given, owner) if owner else None
    if owner is not None and passed is not None and not _refiltered(
        given, owner, flow) and not _kept_lists.filled_in(
            given, owner, flow):
      wrappers[id(owner.node)] = passed
      inner.setdefault(id(owner.node), (call, analysis.module(scope)))
      owners.setdefault(owner.name, []).append(owner)
      continue
    labels = _outside.marked(call, _recognised(analysis, chosen, scope,
                                                call, created))
    returned = _returned_filters(analysis, chosen, scope, labels)
    labels = {**labels, "filtered": returned[0]} if returned else labels
    if chosen is not None and "filtered" not in labels:
      labels = _selected(analysis, chosen, scope, labels)
    found.append(Step(call, scope, chosen, _loss_of(call, flow, scope),
                      labels, tuple(returned[1:] or _overridden.other_filters(
                          analysis, chosen, scope, labels)),
                      section=_graphs.section(scope, call)))
  # A wrapper's other steps train what its callers pass: their filter is
  # found where the wrapper is called.
  found = [step for step in found if not _inside(step.scope, wrappers)]
  callers = analysis.project.all_modules_with(owners) if owners else []
  for scope, call in analysis.project.calls_named(owners, callers) if (
      owners) else ():
    if analysis.module(scope).is_test or id(call) in seen:
      continue
    callee = flow.callee(call, scope) or _by_keyword(call, [
        o.node for o in owners.get(_names.call_name(call), ())], wrappers)
    for each in [callee] if callee is not None and id(callee) in (
        wrappers) else _overrides_run(analysis, call, scope, owners,
                                      wrappers):
      step = _wrapped(call, scope, each, wrappers[id(each)], analysis,
                      created)
      made, home = inner[id(each)]
      if home is analysis.module(scope):
        step.inside = made
      found.append(step)
  return found


def _overrides_run(analysis: Analysis, call: ast.Call,
                   scope: _scopes.Scope,
                   owners: Dict[str, List[_scopes.Scope]],
                   wrappers: Dict[int, Tuple[int, int]]) -> List[ast.AST]:
  """The wrappers a base class's call on its own object runs: the
  overrides, in the project's subclasses of the calling method's class,
  that pass their parameters on to a step (`self._create_optimizer(loss,
  var_list)`, each subclass's `_create_optimizer` calling `minimize`),
  one for each place the variables are passed."""
  found: Dict[object, ast.AST] = {}
  for owner in _by_base(analysis, owners, _names.call_name(call)).get(
      id(scope.cls.node) if scope.cls else 0, ()):
    if _base_calls.reaches(analysis.project, call, scope, owner):
      found.setdefault((_wrapper_params(owner), wrappers[id(owner.node)]),
                       owner.node)
  return list(found.values())


def _by_base(analysis: Analysis, owners: Dict[str, List[_scopes.Scope]],
             name: str) -> Dict[int, List[_scopes.Scope]]:
  """The wrappers named `name`, by each project class their class derives
  from (the only calls that may reach them: built once per analysis, as
  `owners` is)."""
  def build() -> Dict[int, List[_scopes.Scope]]:
    index: Dict[int, List[_scopes.Scope]] = {}
    for owner in owners.get(name, ()):
      for base in analysis.project.base_classes(owner.cls) if (
          owner.cls is not None) else ():
        index.setdefault(id(base.node), []).append(owner)
    return index
  found = analysis.once(f"wrappers by base {name}", build)
  return found if isinstance(found, dict) else {}


def _wrapper_params(owner: _scopes.Scope) -> Tuple[str, ...]:
  """A wrapper's parameter names: two overrides taking the call's
  arguments alike and passing on the same ones make one step at it."""
  arguments = getattr(owner.node, "args", None)
  return tuple(a.arg for a in getattr(arguments, "args", ()))


def _recognised(analysis: Analysis, chosen: Optional[ast.AST],
                scope: _scopes.Scope, call: ast.Call,
                created: Dict[int, Set[str]]) -> Labels:
  """The labels of a step's list, "filtered" where a recogniser reads it
  as a filter: the flow's, a hand-made list, keys chosen by name, some
  entries of a collection."""
  flow = analysis.flow
  labels = flow.sink_labels(chosen, scope, "filtered") if chosen else {}
  if chosen is not None and "filtered" not in labels and _hand_made(
      analysis, chosen, scope, call, created):
    labels = {**labels, "filtered": chosen}
  keyed = _hand_picked.chosen_at(chosen, scope, flow) if chosen is not None \
      and "filtered" not in labels else None
  if keyed is not None:  # `[params[k] for k in keys]`, keys by name.
    flow.origin.setdefault(id(keyed), scope)
    labels = {**labels, "filtered": keyed}
  entries = _some_entries(chosen, scope, analysis) if chosen is not None \
      and "filtered" not in labels else None
  if entries is not None:
    flow.origin.setdefault(id(entries), scope)
    labels = {**labels, "filtered": entries}
  accessor = _own_subset.accessed(analysis, chosen, scope) if (
      chosen is not None and "filtered" not in labels) else None
  if accessor is not None:  # `model.head_vars`: the model's own choice.
    flow.origin.setdefault(id(accessor), scope)
    labels = {**labels, "filtered": accessor}
  grown = _newest_part.newest(chosen, scope) if (
      "filtered" not in labels) else None
  if grown is not None:  # A grown model's newest part, alone.
    labels = {**labels, "filtered": grown}
  owner = _own_subset.owner_class(analysis, chosen, scope) if (
      accessor is not None or "filtered" not in labels) else None
  return {**labels, "owner": owner} if owner is not None else labels


def _selected(analysis: Analysis, chosen: ast.AST, scope: _scopes.Scope,
              labels: Labels) -> Labels:
  """The inverse default (`_selecting`): a list no recogniser reads as a
  filter that still selects some of the variables."""
  found = _selecting.selected(analysis, chosen, scope)
  if found is None:
    return labels
  analysis.flow.origin.setdefault(id(found[0]), found[1])
  return {**labels, "filtered": found[0]}


def _by_keyword(call: ast.Call, candidates: List[ast.AST],
                functions: Dict[int, Tuple[int, int]]) -> Optional[ast.AST]:
  """The wrapper a method call of an object the flow cannot follow
  (`ensembler.build_train_op(loss=loss, var_list=chosen)`, `ensembler` a
  parameter) reaches: the project's methods of that name, when each
  passes on the variables the call names by keyword."""
  if not isinstance(call.func, ast.Attribute) or not candidates:
    return None
  given = {k.arg for k in call.keywords}
  for candidate in candidates:
    params = [a.arg for a in getattr(candidate, "args").args]
    position = functions[id(candidate)][1]
    if not 0 <= position < len(params) or params[position] not in given:
      return None
  return candidates[0]


def _inside(scope: Optional[_scopes.Scope],
            functions: Dict[int, Tuple[int, int]]) -> bool:
  """Whether `scope` is one of `functions` or nested in one."""
  while scope is not None:
    if id(scope.node) in functions:
      return True
    scope = scope.parent
  return False


def _read_of_parameter(chosen: Optional[ast.AST], scope: _scopes.Scope
                       ) -> Optional[ast.AST]:
  """`chosen`, or the parameter it reads each element of (`var_refs =
  [v.read_value() for v in tvars]`, `tvars` given), or the variables of
  the pairs it names (`pairs = list(zip(sanitized, var_list))`, applied:
  a DP optimizer's own `minimize_ours` trains what its callers pass)."""
  if not isinstance(chosen, ast.Name) or chosen.id in scope.params:
    return chosen
  defs = scope.defs.get(chosen.id, [])
  value = defs[0].value if len(defs) == 1 else None
  paired = _paired_with(value)
  if isinstance(paired, ast.Name) and paired.id in scope.params:
    return paired
  if isinstance(value, (ast.ListComp, ast.GeneratorExp)) and len(
      value.generators) == 1 and not value.generators[0].ifs and isinstance(
          value.generators[0].iter, ast.Name) and (
              value.generators[0].iter.id in scope.params):
    return value.generators[0].iter
  return chosen


def _paired_with(value: Optional[ast.AST]) -> Optional[ast.AST]:
  """The variables of `zip(grads, variables)` (in `list(...)` or not)."""
  if isinstance(value, ast.Call) and _names.call_name(value) == "list" and (
      len(value.args) == 1) and not value.keywords:
    value = value.args[0]
  if isinstance(value, ast.Call) and _names.call_name(value) == "zip" and (
      len(value.args) == 2) and not value.keywords:
    return value.args[1]
  return None


def _computed_from(pairs: ast.expr, scope: _scopes.Scope, listed: str
                   ) -> Optional[ast.Name]:
  """The first parameter of `scope` (not `self`, nor the list `listed`)
  that the gradients of `pairs` (`list(zip(grads, var_list))`, or a
  name bound once to it) are computed from, following the names of
  the function that define them, by the project's own code; None if
  none is, or if a step computes them (`tf.gradients(loss, tvars)`)."""
  if isinstance(pairs, ast.Name):
    defs = scope.defs.get(pairs.id, [])
    pairs = defs[0].value if len(defs) == 1 else pairs
  unwrapped = _names.unwrapped(pairs)
  if isinstance(unwrapped, ast.Call) and _names.call_name(
      unwrapped) == "list" and len(unwrapped.args) == 1:
    unwrapped = unwrapped.args[0]
  if not isinstance(unwrapped, ast.Call) or _names.call_name(
      unwrapped) != "zip" or len(unwrapped.args) != 2:
    return None
  todo: List[ast.AST] = [unwrapped.args[0]]
  seen: Set[str] = set()
  while todo and len(seen) < 64:
    for node in _scopes.walk(todo.pop()):
      if isinstance(node, ast.Call) and _names.call_name(node) in STEPS:
        return None  # `tf.gradients(loss, tvars)`: that step says it.
      if isinstance(node, ast.Name) and node.id not in seen:
        seen.add(node.id)
        todo += [each.value for each in scope.defs.get(node.id, [])]
  found = [p for p in scope.params if p in seen and p not in {
      "self", "cls", listed}]
  return ast.Name(found[0], ast.Load()) if found else None


def _owner(chosen: Optional[ast.AST], scope: _scopes.Scope
           ) -> Optional[_scopes.Scope]:
  """The function whose parameter `chosen` is: the step's own, or one
  that encloses it (a factory returning the step as a closure,
  `get_train_step_fn(model, optimizer, vars_to_fine_tune)`)."""
  if not isinstance(chosen, ast.Name):
    return None
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if chosen.id in place.params:
      return place
    if chosen.id in place.defs or not isinstance(place.node, (
        ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
      return None
    place = place.parent
  return None


def _passed_on(call: ast.Call, chosen: Optional[ast.AST],
               scope: _scopes.Scope) -> Optional[Tuple[int, int]]:
  """(loss, var_list) parameter positions when `call` trains exactly the
  variables its function was given; an `apply_gradients`' loss is the
  first parameter its gradients are computed from (`_computed_from`:
  `d_loss_real` of a DP optimizer's `minimize_ours(d_loss_real,
  d_loss_fake, var_list=...)`)."""
  if not isinstance(chosen, ast.Name) or chosen.id not in scope.params or (
      not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef))):
    return None
  loss = call.args[0] if call.args and _names.call_name(
      call) != "apply_gradients" else None
  if loss is None and call.args:
    loss = _computed_from(call.args[0], scope, chosen.id)
  position = scope.params.index(chosen.id)
  losses = scope.params.index(loss.id) if isinstance(
      loss, ast.Name) and loss.id in scope.params else -1
  return losses, position


def _refiltered(given: Optional[ast.AST], owner: _scopes.Scope,
                flow: Flow) -> bool:
  """Whether the function sets its parameter anew to a filtered list
  before its step (`if config.trainSubset: var_list = [v for v in all if
  ...]`): a step of its own, not only the list its callers pass; not a
  default filled in when none is given (`if var_list is None:`)."""
  return isinstance(given, ast.Name) and given.id in owner.defs and not any(
      isinstance(n, ast.If) and any(
          isinstance(t, ast.Name) and t.id == given.id
          for t in _scopes.walk(n.test)) and _filled.fills(n, given.id)
      for n in owner.nodes) and (
          "filtered" in flow.sink_labels(given, owner, "filtered"))


def _wrapped(call: ast.Call, scope: _scopes.Scope, callee: ast.AST,
             positions: Tuple[int, int], analysis: Analysis,
             created: Dict[int, Set[str]]) -> Step:
  """The step a call of a wrapper makes, from its arguments."""
  params = [a.arg for a in getattr(callee, "args").args]
  if params[:1] in (["self"], ["cls"]):
    params = params[1:]
    positions = (positions[0] - 1, positions[1] - 1)

  def argument(position: int) -> Optional[ast.expr]:
    if position < 0:
      return None
    if position < len(call.args) and not any(
        isinstance(a, ast.Starred) for a in call.args[:position + 1]):
      return call.args[position]
    name = params[position] if position < len(params) else ""
    return next((k.value for k in call.keywords if k.arg == name), None)

  chosen, loss = argument(positions[1]), argument(positions[0])
  labels = analysis.flow.labels(chosen, scope) if chosen is not None else {}
  if chosen is not None and "filtered" not in labels and _hand_made(
      analysis, chosen, scope, call, created):
    labels = {**labels, "filtered": chosen}  # Some variables made by hand.
  returned = _returned_filters(analysis, chosen, scope, labels)
  if returned:
    labels = {**labels, "filtered": returned[0]}
  return Step(call, scope, chosen, _loss_key(loss, scope), labels,
              tuple(returned[1:]), section=_graphs.section(scope, call))


def _grouped(analysis: Analysis, steps: List[Step]) -> List[Step]:
  """The steps, each marked when a sibling group of its filtered list
  is trained by no step of its module (`_groups`)."""
  chosen: Dict[int, List[ast.AST]] = {}
  for step in steps:
    if step.var_list is not None:
      chosen.setdefault(id(analysis.module(step.scope)), []).append(
          step.var_list)
  for step in steps:
    step.grouped = "filtered" in step.labels and step.var_list is not None \
        and (_groups.left_out(analysis.flow, step.var_list, step.scope,
                              chosen[id(analysis.module(step.scope))])
             or _run_beside(step.var_list, step.scope, step.call))
  return steps
