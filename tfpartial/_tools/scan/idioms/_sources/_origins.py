"""Where a filter's values come from: the expression a list is built from,
through names, returns of the project's functions and negations."""

from __future__ import annotations

import ast
import re
from typing import Callable, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _property_reads
from tfpartial._tools.scan import _records
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _statistics
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms._sources import _dispatched
from tfpartial._tools.scan.idioms._sources import _frozen_rest
from tfpartial._tools.scan.idioms._sources import _held
from tfpartial._tools.scan.idioms._sources import _looked_up
from tfpartial._tools.scan.idioms._sources import _moving
from tfpartial._tools.scan.idioms._sources import _outer
from tfpartial._tools.scan.idioms._sources import _sliced_at_name
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, _opened_here)


def _returned_filters(analysis: Analysis, chosen: Optional[ast.AST],
                      scope: _scopes.Scope, labels: Labels
                      ) -> List[ast.expr]:
  """The filters of the functions whose result the step trains where the
  flow does not follow it there: a property of the step's class
  (`self.var_list`), a method of an object of a class passed in (`model =
  model_def(x)`, `model.get_retrain_vars()`) or a helper of a module the
  imports do not find (`variables_helper.freeze_gradients_matching_regex(
  grads_and_vars, ...)`) that the project's functions of that name
  filter by name or scope; or the attribute of an object the trainer is
  built with (`self.policy.params`) that its class filters (not its own
  scope, the one it opens around what it builds)."""
  if chosen is None or "filtered" in labels:
    return []
  values = _scopes.values_reaching(chosen, scope)
  found: List[ast.expr] = []
  for value in values:
    for function in _unfollowed(analysis, value, scope, labels):
      node = _returned_filter(analysis.flow, function) or _returned(
          analysis.flow, function, _looked_up.by_name) or _returned(
              analysis.flow, function, _sliced_at_name.sliced)
      if node is not None:
        found.append(node)
  for node, home in _held.held_filters(analysis, chosen, scope):
    if node not in found and not (isinstance(node, ast.Call) and (
        _opened_here(_names.scope_argument(node), home))):
      analysis.flow.origin.setdefault(id(node), home)
      found.append(node)
  return found


def _negated(node: ast.AST) -> bool:
  """Whether a filter drops what a test names (`not lower(v)`, `'beta'
  not in v.name`)."""
  return any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) or (
      isinstance(n, ast.Compare) and any(
          isinstance(op, ast.NotIn) for op in n.ops))
             for n in _scopes.walk(node))


def _unfollowed(analysis: Analysis, value: ast.AST, scope: _scopes.Scope,
                labels: Labels) -> List[_scopes.Scope]:
  """The functions a property read or a call the flow does not follow
  may run: the property's, or the project's functions of the name."""
  function = labels.get("fn")
  read = _moving.property_read(analysis.project, value, scope)
  if read is not None and function is None:
    return [read]  # A Keras model's own property (`self.variables`).
  if isinstance(value, ast.Attribute) and isinstance(
      function, ast.FunctionDef) and any(
          _names.dotted(d) == "property" for d in function.decorator_list):
    home = analysis.flow.functions.get(id(function))
    inner = home[1].scope_of(function) if home else None
    return [inner] if inner is not None else []
  if isinstance(value, ast.Call) and isinstance(
      value.func, ast.Attribute) and analysis.flow.callee(
          value, scope) is None and (
              not isinstance(value.func.value, ast.Name) or not (
                  analysis.project.external(scope, value.func.value.id))
              or analysis.project.holds_module(scope, value.func.value.id)):
    return list(analysis.project.functions_named(
        (value.func.attr,), unscanned=True))
  return _dispatched.overrides(analysis, value, scope)


def _returned(flow: Flow, function: _scopes.Scope,
              match: Callable[[ast.AST, _scopes.Scope], Optional[ast.expr]]
              ) -> Optional[ast.expr]:
  """Where `function` returns a list `match` recognises (variables looked
  up by name, a list cut where a name test matched)."""
  for node in function.nodes:
    if isinstance(node, ast.Return) and node.value is not None:
      found = match(node.value, function)
      if found is not None:
        flow.origin.setdefault(id(found), function)
        return found
  return None


def _returned_filter(flow: Flow, function: _scopes.Scope
                     ) -> Optional[ast.expr]:
  """Where a function filters the variables it returns, if it does."""
  for returned in function.nodes:
    if not isinstance(returned, ast.Return) or returned.value is None:
      continue
    got = flow.chosen(returned.value, function, flow.labels(
        returned.value, function))
    if "filtered" in got:
      node = _origin(flow, returned.value, function, set())
      if node is returned.value and isinstance(got["filtered"], ast.expr):
        node = got["filtered"]  # Where the comprehension's source is.
      node = node if isinstance(node, ast.expr) else returned.value
      if _statistics.looked_through(node) is not None:
        continue  # Only moving statistics dropped: no filter.
      if any(isinstance(n, ast.Name) and n.id in function.params and (
          _REPLICA.search(n.id)) for n in _scopes.walk(node)):
        return None  # One replica's copy of the model (`'v%s/' % device`).
      flow.origin.setdefault(id(node), function)
      return node
  return None


# A parameter naming one replica of a model copied per device.
_REPLICA = re.compile(r"device|tower|replica|gpu|clone|worker|shard", re.I)


def _origin(flow: Flow, expr: Optional[ast.AST], scope: _scopes.Scope,
            seen: Set[int]) -> Optional[ast.AST]:
  """Where the filtered list comes from, as near the step as the code
  says it: the local name's assignment, the call of a helper or of a
  filter passed in, the comprehension, the loop's addition."""
  if expr is None or id(expr) in seen or len(seen) > 16:
    return expr
  seen.add(id(expr))
  if isinstance(expr, (ast.Name, ast.Attribute)):
    return _name_origin(flow, expr, scope, seen)
  parts: List[ast.AST] = []
  if isinstance(expr, ast.BinOp):
    parts = [expr.left, expr.right]
  elif isinstance(expr, ast.IfExp):
    parts = [expr.body, expr.orelse]
  elif isinstance(expr, (ast.List, ast.Tuple)):
    if len(expr.elts) > 1:
      return expr  # `[head_w, adapters]`: the list is the choice.
    parts = list(expr.elts)
  elif isinstance(expr, ast.Starred):
    parts = [expr.value]
  elif _entry(flow, expr, scope) is not None:  # `graph_vars['network']`.
    return _entry_origin(flow, expr, scope, seen)
  elif _statistics.looked_through(expr) is not None:
    source = _statistics.looked_through(expr)
    inner = _called(flow, source, scope)
    if inner is not None:  # The helper's own filter, or none at all.
      return _returned_filter(flow, inner) or expr
    parts = [source] if source is not None else []
  elif isinstance(expr, ast.Call) and (_names.call_name(expr) in (
      _names.CONTAINERS) or _names.joins_lists(expr)):
    parts = list(expr.args)
  elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
      and expr.func.attr in _names.SUBSETS:
    parts = [expr.func.value, *expr.args]  # The set it keeps some of.
  for part in parts:
    if "filtered" in flow.labels(part, scope):
      return _origin(flow, part, scope, seen)
  return expr


def _name_origin(flow: Flow, expr: ast.AST, scope: _scopes.Scope,
                 seen: Set[int]) -> Optional[ast.AST]:
  """`_origin` of a name or an attribute: its values' filters, a
  property's returned filter, or a list written by hand."""
  values, frozen = _values_of(flow, expr, scope), False
  method = _property_reads.read(flow, expr, scope) if isinstance(
      expr, ast.Attribute) and not values else None
  if method is not None:  # `net.trainable_variables`, a property's.
    return _returned_filter(flow, method) or expr
  for value, home in values:
    got = flow.chosen(value, home, flow.labels(value, home))
    if "filtered" in got and _moved_out(value, home):
      continue  # Taken out to train in a step of its own.
    if "filtered" in got:
      if _frozen_rest.left_frozen(value, home):
        frozen = True  # Leaves out only layers frozen whole: no choice.
        continue
      if id(value) in home.guards:
        return value
      if isinstance(expr, ast.Attribute) and _grown_only(flow, value, home,
                                                         expr):
        continue  # `self.vs += model.weights`: the filter is elsewhere.
      return _origin(flow, value, home, seen)
  if frozen:
    return None  # Every filter of it leaves out only frozen layers.
  # A list written by hand (`meta_vars = [W_meta, W_senet]`) is the
  # choice where it is written.
  return values[0][0] if len(values) == 1 and values[0][1] is scope and (
      isinstance(values[0][0], (ast.List, ast.Tuple))) else expr


def _entry_origin(flow: Flow, expr: ast.AST, scope: _scopes.Scope,
                  seen: Set[int]) -> Optional[ast.AST]:
  """The origin of the list a dict holds under the key `expr` reads (a
  key names the entry, not a scope), or `expr` if it is not filtered."""
  entry, home = _entry(flow, expr, scope) or (expr, scope)
  if "filtered" in flow.labels(entry, home):
    return _origin(flow, entry, home, seen)
  return expr


def _entry(flow: Flow, expr: ast.AST, scope: _scopes.Scope
           ) -> Optional[Tuple[ast.expr, _scopes.Scope]]:
  """The value a dict written out in one place (`{'network': ...}`)
  holds under the literal key `expr` reads (`graph_vars['network']`),
  with the scope it is written in; None if the dict has other values."""
  if not isinstance(expr, ast.Subscript) or not isinstance(
      expr.value, ast.Name) or not isinstance(expr.slice, ast.Constant):
    return None
  values = _values_of(flow, expr.value, scope)
  if len(values) != 1 or not isinstance(values[0][0], ast.Dict):
    return None
  table, home = values[0]
  assert isinstance(table, ast.Dict)
  found = [v for k, v in zip(table.keys, table.values)
           if isinstance(k, ast.Constant) and k.value == expr.slice.value]
  return (found[0], home) if len(found) == 1 else None


def _moved_out(value: ast.expr, home: _scopes.Scope) -> bool:
  """Whether `value` is `kept.remove(v)` for each `v` of a list that a
  step of the function trains, itself or in a list it is added to
  (`all_adjust.append(adjust)`, then `minimize(..., var_list=
  all_adjust[i])` at its own rate): moved to that step, not left out."""
  if not isinstance(value, ast.Call) or _names.call_name(value) != (
      "remove") or len(value.args) != 1 or not isinstance(
          value.args[0], ast.Name):
    return False
  source = home.loops.get(value.args[0].id)
  if not isinstance(source, ast.Name):
    return False
  holders = {source.id} | {name for name, defs in home.defs.items() if any(
      isinstance(d.value, ast.Name) and d.value.id == source.id
      and not d.replaces for d in defs)}
  for node in home.nodes:
    if isinstance(node, ast.Call) and _names.call_name(node) in STEPS:
      listed = [k.value for k in node.keywords if k.arg == "var_list"]
      if any(isinstance(n, ast.Name) and n.id in holders
             for each in listed for n in ast.walk(each)):
        return True
  return False


def _grown_only(flow: Flow, value: ast.expr, home: _scopes.Scope,
                attribute: ast.Attribute) -> bool:
  """Whether `value`, assigned to `attribute`, is filtered only through
  the attribute itself (`self.train_vars += self.model.trainable_variables`
  in one arm of a mode's `if`, the filter in another arm): the flow holds
  one value for an attribute across its assignments."""
  if not isinstance(value, ast.BinOp):
    return False
  name = _names.dotted(attribute)
  carrying = [part for part in (value.left, value.right)
              if "filtered" in flow.labels(part, home)]
  return bool(carrying) and all(
      _names.dotted(part) == name for part in carrying)


def _values_of(flow: Flow, expr: ast.AST, scope: _scopes.Scope
               ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """The values a local name or a `self.` attribute holds at `expr`."""
  name = _names.dotted(expr)
  owner = flow.labels(expr.value, scope).get("obj") if isinstance(
      expr, ast.Attribute) and isinstance(expr.value, ast.Name) and (
          expr.value.id != "self") else None
  info = flow.classes.get(id(owner)) if owner is not None else None
  if info is not None and isinstance(expr, ast.Attribute):
    # `D_gpu.trainables` of a network: where its class drops some of its
    # variables by a negated test (`not lower(v)`).
    return [(value, home) for value, home in flow.project.attribute(
        info, f"self.{expr.attr}") if _negated(value)]
  if isinstance(expr, ast.Name) and expr.id in scope.defs:
    defs = scope.defs[expr.id]
    return [(defs[i].value, scope)
            for i in reversed(scope.reaching(expr.id, expr))]
  if isinstance(expr, ast.Name):
    outer = _outer.outer_values(expr, scope)
    if outer:  # A script's list read by its `train_step`.
      return outer
  if name and name.count(".") == 1 and name.startswith("self."):
    info = scope.cls
    place: Optional[_scopes.Scope] = scope
    while info is None and place is not None:
      place = place.parent
      info = place.cls if place is not None else None
    if info is not None:
      return flow.project.attribute(info, name)
  if isinstance(expr, ast.Attribute):
    return _records.field_values(flow, expr, scope)  # `out.train_vars`.
  return []


def _called(flow: Flow, node: Optional[ast.AST], scope: _scopes.Scope
            ) -> Optional[_scopes.Scope]:
  """The scope of the project's function a call runs, if the flow knows
  it."""
  if not isinstance(node, ast.Call):
    return None
  function = flow.callee(node, scope)
  home = flow.functions.get(id(function)) if function is not None else None
  return home[1].scope_of(function) if home and function is not None else (
      None)
