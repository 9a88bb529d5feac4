"""Where a helper chooses the list a step trains: `variables_to_train =
_get_variables_to_train()` (slim's), `_get_localization_vars_to_train(
scopes)`, a function of another module. The choice is the statement
inside the helper that keeps some variables (`tf.get_collection(
TRAINABLE_VARIABLES, scope)` per scope, `if FLAGS.layer in var.name:
chosen.append(var)`), not the line that calls it: a reader changing
what trains edits the helper. The call and the step are named in the
message. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Callable, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms._sources import _flagged

# A helper handed variables (`filter_variables(tf.trainable_variables(),
# regex)`) filters what its caller chose: the choice is at the call.
_HANDED = frozenset({"var", "grad", "filtered"})
# The file of the step and the call, when the helper is in another.
_CALLER = "caller"
# Where a function filters what it returns (the idiom's own reading).
Returned = Callable[[Flow, _scopes.Scope], Optional[ast.expr]]
# The label a hit carries for the helper's call, named in its message.
CALLED = "called"


def placed(flow: Flow, node: ast.expr, scope: _scopes.Scope,
           labels: Labels, returned: Returned) -> Tuple[ast.expr, Labels]:
  """(where the finding is, its labels) for a step whose filter is
  `node` (in `scope`): inside the helper `node` calls when the helper
  chooses, with the call (and whether the helper narrows a larger list
  of its own) in the labels; else `node` and `labels` as they are.
  `returned` finds where a function filters what it returns, for a
  helper of the project spelled as a library's (`get_trainable_variables(
  scopes)`, slim's name), whose call is its own filter label."""
  chosen = labels.get("filtered")
  if chosen is node and isinstance(node, ast.Call):
    helper = _helper_scope(flow, node, flow.origin.get(id(node), scope))
    chosen = returned(flow, helper) if helper is not None else None
  inner = chosen_inside(flow, node, scope, chosen)
  if inner is None or not isinstance(node, ast.Call):
    return node, labels
  caller = flow.origin.get(id(node), scope)
  labels = {**labels, CALLED: node}
  if narrows(flow, node, caller, inner):
    labels[NARROWED] = node
  home = flow.origin.get(id(inner))
  source = flow.project.module_of(caller).source
  if home is not None and flow.project.module_of(home).source is not source:
    labels[_CALLER] = ast.Constant(source.path)  # The step's file.
  return inner, labels


def scope_passed(flow: Flow, node: ast.expr, scope: _scopes.Scope,
                 returned: Returned) -> bool:
  """Whether `node` calls a method of `self` whose filter keeps the
  variables of a scope its parameter names, and passes that parameter a
  scope made from the object's own attributes (`self.trainable_variables(
  self.name + '/G')`, a model's method that returns the trainable
  variables under the scope it is given): the caller chooses the part of
  its own model, so the finding stays at the call. A literal scope stays
  shown in the helper, as before."""
  if not isinstance(node, ast.Call) or not isinstance(
      node.func, ast.Attribute) or _names.dotted(node.func.value) != "self":
    return False
  helper = _helper_scope(flow, node, flow.origin.get(id(node), scope))
  function = helper.node if helper is not None else None
  if helper is None or not isinstance(
      function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  inner = returned(flow, helper)
  if inner is None:
    return False
  read = {n.id for n in _scopes.made_from(inner, helper)
          if isinstance(n, ast.Name)}
  params = [a.arg for a in function.args.args]
  given = [_names.argument(node, params, p) for p in read & set(params)
           if p != "self"]
  return any(g is not None and any(
      isinstance(n, ast.Attribute) and _names.dotted(n.value) == "self"
      for n in ast.walk(g)) for g in given)


def names_given(flow: Flow, node: ast.expr, scope: _scopes.Scope,
                returned: Returned) -> bool:
  """Whether `node` calls a function of the project (a utilities
  module's, or one beside the step: `get_variables_with_name(
  'adapter_layers')`) whose filter keeps the variables named by a
  parameter (directly or through a loop over it), and binds every such
  parameter to literal names (`get_trainable_variables(["encode_context",
  "pixel_cnn"])`): a generic name filter; the names, chosen at the call,
  are the choice, so the finding stays there, in whichever module the
  helper is. A method of `self` (a base class's: `scope_passed`) stays
  the place, as before."""
  if not isinstance(node, ast.Call) or isinstance(
      node.func, ast.Attribute) and _names.dotted(node.func.value) == "self":
    return False
  caller = flow.origin.get(id(node), scope)
  helper = _helper_scope(flow, node, caller)
  function = helper.node if helper is not None else None
  if helper is None or not isinstance(
      function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  inner = returned(flow, helper)
  if inner is None:
    return False
  read: Set[str] = set()
  for name in {n.id for n in _scopes.made_from(inner, helper)
               if isinstance(n, ast.Name)}:
    read.add(name)
    looped = helper.loops.get(name)
    if looped is not None:
      read |= {n.id for n in ast.walk(looped) if isinstance(n, ast.Name)}
  params = [a.arg for a in function.args.args]
  given = [_names.argument(node, params, p) for p in read & set(params)
           if p != "self"]
  return bool(given) and all(_names.literal_names(g) for g in given)


def _helper_scope(flow: Flow, call: ast.Call, scope: _scopes.Scope
                  ) -> Optional[_scopes.Scope]:
  """The scope of the project's function `call` runs, if it runs one."""
  callee = flow.callee(call, scope)
  home = flow.functions.get(id(callee)) if callee is not None else None
  return home[1].scope_of(home[0]) if home is not None else None


def chosen_inside(flow: Flow, node: ast.expr, scope: _scopes.Scope,
                  chosen: object) -> Optional[ast.expr]:
  """The filter `chosen` (the step's "filtered" label) when it lies in
  the function of the project that the call `node` runs, else None
  (not a call of the project's, or a helper handed the variables it
  filters)."""
  if not isinstance(node, ast.Call) or not isinstance(chosen, ast.expr) or (
      chosen is node):
    return None
  home = flow.origin.get(id(node), scope)
  callee = flow.callee(node, home)
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or any(
      _HANDED & set(flow.labels(arg, home)) for arg in (
          *node.args, *(k.value for k in node.keywords))):
    return None
  place = flow.origin.get(id(chosen))
  while place is not None and place.node is not callee:
    place = place.parent
  if place is None:
    return None
  return _flag_given(flow, chosen, place) or chosen


def _flag_given(flow: Flow, chosen: ast.expr, helper: _scopes.Scope
                ) -> Optional[ast.expr]:
  """The filter of the other branch when `chosen` is on the side of an
  `if FLAGS.x is None:` (or the `else` of `is not None`) that runs
  without the flag: the branch for the flag given is the choice the
  helper was written for (SSR's `--update_layer_name`)."""
  at = _position(chosen)
  for test in _scopes.walk(helper.node):
    if not isinstance(test, ast.If) or not isinstance(
        test.test, ast.Compare) or not _none_test(test.test):
      continue
    absent, given = (test.body, test.orelse) if isinstance(
        test.test.ops[0], ast.Is) else (test.orelse, test.body)
    if absent and given and _position(absent[0]) <= at <= _end(absent[-1]):
      for statement in given:
        found = _filter_in(flow, statement, helper)
        if found is not None:
          flow.origin.setdefault(id(found), helper)
          return found
  return None


def _none_test(test: ast.Compare) -> bool:
  """`FLAGS.x is None`, `args.x is not None`: a flag left unset."""
  return len(test.ops) == 1 and (
      isinstance(test.ops[0], (ast.Is, ast.IsNot))) and isinstance(
          test.left, ast.Attribute) and _names.is_none(test.comparators[0])


def _filter_in(flow: Flow, statement: ast.stmt, helper: _scopes.Scope
               ) -> Optional[ast.expr]:
  """The first value `statement` adds to a list or assigns that keeps
  some variables by name or scope."""
  for node in _scopes.walk(statement):
    value: Optional[ast.expr] = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in {"append", "extend"} and len(node.args) == 1:
      value = node.args[0]
    elif isinstance(node, ast.Assign):
      value = node.value
    if value is not None and "filtered" in flow.chosen(
        value, helper, flow.labels(value, helper)):
      return value
  return None


def _position(node: ast.AST) -> Tuple[int, int]:
  return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _end(node: ast.AST) -> Tuple[int, int]:
  return (getattr(node, "end_lineno", 0) or 0,
          getattr(node, "end_col_offset", 0) or 0)


def mention(labels: Labels) -> str:
  """`, returned by `helper()` (line N)` for a hit moved into a
  helper (`in train.py` when the step is in another file), else the
  empty string."""
  called = labels.get(CALLED)
  if not isinstance(called, ast.Call):
    return ""
  caller = labels.get(_CALLER)
  where = f" in {caller.value}" if isinstance(caller, ast.Constant) and (
      isinstance(caller.value, str)) else ""
  return (f", returned by `{_names.call_name(called)}()` (line "
          f"{called.lineno}){where}")


# The label of a hit whose helper keeps, under a flag, a part of what it
# returns without the flag: left out, beside any other step's filter.
NARROWED = "narrowed"


def narrows(flow: Flow, call: ast.Call, caller: _scopes.Scope,
            chosen: ast.expr) -> bool:
  """Whether the helper `call` runs keeps `chosen` on one side of an
  `if` on a flag and returns on the other every variable, or a scope
  whose sub-scopes are all that `chosen` collects (`for scope in
  train_scope: get_collection(..., scope)`, else `get_collection(...,
  'stn/localization')`): the helper's own choice against a larger
  list."""
  helper = flow.origin.get(id(chosen))
  while helper is not None and not isinstance(
      helper.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    helper = helper.parent
  if helper is None:
    return False
  at = _position(chosen)
  for test in _scopes.walk(helper.node):
    if not isinstance(test, ast.If) or not _flagged.a_flag(test.test):
      continue
    for mine, other in ((test.body, test.orelse), (test.orelse, test.body)):
      if mine and _position(mine[0]) <= at <= _end(mine[-1]):
        kept = _kept_scopes(chosen, call, helper, caller)
        return any(_larger(flow, node, helper, kept) for statement in (
            other or _after(helper.node, test)) for node in _scopes.walk(
                statement) if isinstance(node, ast.Return))
  return False


def _after(function: ast.AST, test: ast.If) -> List[ast.stmt]:
  """The statements after `test` in its function's body."""
  body = _names.statements(function)
  return body[body.index(test) + 1:] if test in body else []


def _larger(flow: Flow, returned: ast.Return, helper: _scopes.Scope,
            kept: List[str]) -> bool:
  """Whether `returned` returns every variable, or a scope's that holds
  each of the scopes `kept` (none known: False)."""
  value = returned.value
  if not isinstance(value, ast.Call) or _names.call_name(value) not in (
      "get_collection", "trainable_variables"):
    return False
  labels = flow.labels(value, helper)
  if "var" in labels and "filtered" not in labels:
    return True
  whole = _strings(value.args[1] if len(value.args) > 1 else None, helper)
  return len(whole) == 1 and bool(kept) and all(
      scope.startswith(whole[0].rstrip("/") + "/") for scope in kept)


def _kept_scopes(chosen: ast.expr, call: ast.Call, helper: _scopes.Scope,
                 caller: _scopes.Scope) -> List[str]:
  """The scopes `get_collection(key, scope)` collects, `scope` a loop's
  over a parameter the call binds to a list of names (else none)."""
  if not isinstance(chosen, ast.Call) or len(chosen.args) < 2 or not (
      isinstance(chosen.args[1], ast.Name)):
    return []
  source = helper.loops.get(chosen.args[1].id)
  if not isinstance(source, ast.Name) or source.id not in helper.params:
    return []
  index = helper.params.index(source.id)
  given = call.args[index] if index < len(call.args) else None
  return _strings(given, caller)


def _strings(node: Optional[ast.AST], scope: _scopes.Scope) -> List[str]:
  """The names a string, or a list of them, holds: literal, or a module
  constant's (`LOC_SCOPE`, `loc_train_vars_scope`)."""
  if isinstance(node, ast.Name):
    root = scope
    while root.parent is not None:
      root = root.parent
    defs = root.defs.get(node.id, [])
    node = defs[0].value if len(defs) == 1 else None
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return [node.value]
  if isinstance(node, (ast.List, ast.Tuple)) and all(
      isinstance(e, ast.Constant) and isinstance(e.value, str)
      for e in node.elts):
    return [str(e.value) for e in node.elts if isinstance(e, ast.Constant)]
  return []
