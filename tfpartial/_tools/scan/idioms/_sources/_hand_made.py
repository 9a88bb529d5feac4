"""Lists written by hand for a step: a part of what a call returns, some of
the variables a function creates, some entries of a table, and the steps
run beside them."""

from __future__ import annotations

import ast
import bisect
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies import _writes
from tfpartial._tools.scan.idioms._runs import _arms
from tfpartial._tools.scan.idioms._runs import _graphs
from tfpartial._tools.scan.idioms._runs import _scheduled
from tfpartial._tools.scan.idioms._sources import _bare_listed
from tfpartial._tools.scan.idioms._sources import _dict_listed
from tfpartial._tools.scan.idioms._sources import _hand_picked
from tfpartial._tools.scan.idioms._sources import _listed
from tfpartial._tools.scan.idioms._sources import _picked
from tfpartial._tools.scan.idioms._sources import _self_listed
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, _OWN_VARIABLES, _class_of, _end, _trainable_variable, var_list_of)
from tfpartial._tools.scan.idioms._sources import _groups
from tfpartial._tools.scan.idioms._wholes import _frozen_backbone
from tfpartial._tools.scan.idioms._wholes import _wrapped_inputs


def _hand_made(analysis: Analysis, chosen: ast.AST, scope: _scopes.Scope,
               call: ast.Call, created: Dict[int, Set[str]]) -> bool:
  """Whether a list no filter chooses is written by hand and leaves
  variables out: one part of a model run whole, some of the variables a
  function creates, some `self.` variables of a class whose model reads
  another (`_self_listed`), a list run beside the others', one trained beside the
  whole loss, some items of a container picked by index, variables
  of a head built on a pretrained backbone (`_frozen_backbone`), bare
  variables a helper makes while the loss reads others
  (`_bare_listed`), the values of some dicts of variables while the
  model the loss reads is given another (`_dict_listed`)."""
  return _part_of_called(chosen, scope, call, analysis) or _some_created(
      chosen, scope, analysis.flow, created, call) or _self_listed.left_out(
          chosen, scope, created) or _run_beside(
          chosen, scope, call) or _listed.beside_whole(
              chosen, scope, call) or _picked.left_out(
                  chosen, scope, call, analysis,
                  lambda: _module_steps(analysis, scope)) or (
                      _scheduled.part_chosen_apart(
                          chosen, scope, call,
                          lambda n: _names.call_name(n) in STEPS, var_list_of)
                  ) or _hand_picked.picked(chosen, scope, call) or (
                      _frozen_backbone.list_on_backbone(
                          analysis, chosen, scope, call)) or (
                              _bare_listed.left_out(
                                  analysis, chosen, scope, call)) or (
                                      _dict_listed.left_out(
                                          analysis, chosen, scope, call))


def _module_steps(analysis: Analysis, scope: _scopes.Scope
                  ) -> List[Tuple[ast.Call, Optional[ast.AST]]]:
  """The steps of `scope`'s module, each with its list."""
  module = analysis.module(scope)
  return [(call, var_list_of(call))
          for place, call in analysis.calls_named(STEPS)
          if analysis.module(place) is module]


# A container of models or layers, called as one model.
_CONTAINERS = {"Sequential", "Model", "ModuleList"}


def _part_of_called(chosen: ast.AST, scope: _scopes.Scope,
                    step: ast.Call, analysis: Analysis) -> bool:
  """Whether a step trains the variables of one part of a model that its
  function runs whole before it (`head2.trainable_variables` where `path2
  = Sequential([trunk, head2])`, built before, is called): the other parts
  are left out."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else chosen
  if not (isinstance(chosen, ast.Attribute) and chosen.attr in _OWN_VARIABLES
          and isinstance(chosen.value, ast.Name)):
    return False
  part = chosen.value.id
  at = _idiom.position(step)
  called = scope.once((_called_by_name, None, 0),
                      lambda: _called_by_name(scope))
  for name, where in called.items():
    if name == part or where[0] >= at:
      continue  # Not called before the step.
    place: Optional[_scopes.Scope] = scope
    while place is not None:
      if any(_holds(d.value, part) and _called_after(
          tuple(d.end), where, at) and not _others_frozen(
              d.value, part, scope, analysis)
             for d in place.defs.get(name, ())):
        return True
      place = place.parent
  return False


def _called_by_name(scope: _scopes.Scope) -> Dict[str, List[Tuple[int, int]]]:
  """Where the function calls each plain name (`path2(x)`), in order:
  read once per function (each step asks)."""
  called: Dict[str, List[Tuple[int, int]]] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
      called.setdefault(node.func.id, []).append(_idiom.position(node))
  for places in called.values():
    places.sort()
  return called


def _called_after(end: Tuple[int, ...], where: List[Tuple[int, int]],
                  at: Tuple[int, int]) -> bool:
  """Whether one of the places `where` (in order) is after `end` and
  before `at`."""
  index = bisect.bisect_right(where, end)
  return index < len(where) and where[index] < at


def _others_frozen(container: ast.AST, part: str, scope: _scopes.Scope,
                   analysis: Analysis) -> bool:
  """Whether the container's other parts are set `trainable = False`
  (`base.trainable = False`): Keras freezes them already. A Sonnet
  module's `trainable` is a plain attribute that freezes nothing."""
  typed = analysis.typed
  others = {e.id for e in getattr(container, "args")[0].elts
            if isinstance(e, ast.Name) and e.id != part}
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    for node in place.nodes:
      if isinstance(node, ast.Assign) and isinstance(
          node.value, ast.Constant) and node.value.value is False and any(
              isinstance(t, ast.Attribute) and t.attr == "trainable" and
              isinstance(t.value, ast.Name) and t.value.id in others
              and not typed.holds_sonnet(t.value, place)
              for t in node.targets):
        return True
    place = place.parent
  return False


def _some_created(chosen: ast.AST, scope: _scopes.Scope, flow: Flow,
                  created: Dict[int, Set[str]], call: ast.Call) -> bool:
  """Whether a step trains a hand-written list of some of the variables a
  function creates (`return logits, [head_w, head_b]` from a `create_model`
  that also creates the classifier's; `var_list=[modifier]` beside other
  variables): the others are left out (those that exist: `_existing`)."""
  home = scope
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    if len(defs) != 1:
      return False
    value, part = defs[0].value, defs[0].part
    callee = flow.callee(value, scope) if isinstance(
        value, ast.Call) else None
    if part is not None and isinstance(callee, ast.FunctionDef):
      found = flow.functions.get(id(callee))
      inner = found[1].scope_of(callee) if found else None
      if inner is None:
        return False
      home = inner
      returned = [n.value for n in home.nodes if isinstance(n, ast.Return)]
      if len(returned) != 1 or not isinstance(returned[0], ast.Tuple) or (
          len(returned[0].elts) != part[1]):
        return False
      chosen = returned[0].elts[part[0]]
    else:
      chosen = value
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not chosen.elts or (
      not all(isinstance(e, ast.Name) for e in chosen.elts)):
    return False
  names = {e.id for e in chosen.elts if isinstance(e, ast.Name)}
  if not all(any(_trainable_variable(d.value) for d in home.defs.get(n, []))
             for n in names):
    return False
  if id(home) not in created:
    # A variable the code assigns holds inputs (an attack's target
    # image), not parameters.
    written = {_names.dotted(parts[0]) for parts in (
        _writes.target_and_value(n) for n in home.nodes
        if isinstance(n, ast.Call)) if parts}
    created[id(home)] = {
        name for name, defs in home.defs.items()
        if any(_trainable_variable(d.value) for d in defs) and not any(
            _data(d.value) or _wrapped_inputs.wraps_itself(name, d.value)
            for d in defs)} - written
  at = _idiom.position(chosen)
  # A variable made only in the other arm of a flag's `if` is another
  # model's (each arm builds and trains its own).
  others = {n for n in created[id(home)] - names if not all(
      _arms.apart(home, at, d.start) for d in home.defs.get(n, []))}
  others = _existing(others, home, scope, call)
  starts = _graphs.resets(home) if others else []
  if starts:  # A script building each model in a graph of its own.
    others = {n for n in others if any(
        _trainable_variable(d.value) and _graphs.same_graph(
            at, d.start, starts) for d in home.defs.get(n, []))}
  return bool(others)


def _existing(others: Set[str], home: _scopes.Scope, scope: _scopes.Scope,
              call: ast.Call) -> Set[str]:
  """`others` less those the step's own function makes only after the
  step, outside any loop around it (a notebook's next model, `w_tfe =
  tf.Variable(...)` below the loop training `[w, b]`): they do not exist
  while it trains, nothing leaves them out."""
  if home is not scope:
    return others
  reach = _reach(home, call)
  return {n for n in others if not all(
      d.start > reach for d in home.defs.get(n, []))}


def _reach(home: _scopes.Scope, call: ast.Call) -> Tuple[int, int]:
  """How far the step `call` reaches in its function: its own end, or
  the end of the last loop around it (a loop's next turn sees what
  follows the step in it), worked out once per step. A binding that
  starts later is made after the step."""
  at = _idiom.position(call)
  return max([_end(call), *(
      _end(n) for n in home.nodes if isinstance(
          n, (ast.For, ast.AsyncFor, ast.While)) and _idiom.position(n) <= at)])


# Calls whose value is data, not a parameter: a name bound to one of them
# (`X = tf.constant(batch)` each step, after `X = tf.Variable([0])`)
# holds inputs.
_DATA = frozenset({"constant", "convert_to_tensor", "placeholder", "array",
                   "asarray"})


def _data(value: ast.expr) -> bool:
  return isinstance(value, ast.Call) and _names.call_name(value) in _DATA


def _some_entries(chosen: ast.AST, scope: _scopes.Scope,
                  analysis: Analysis) -> Optional[ast.expr]:
  """The list, when a step trains a hand-written list of some entries of dicts
  of variables (`[weights['out'], biases['out']]`, or of `self.weights`)
  that the function passes whole to the model (`inference(x, weights,
  biases)`): the other entries are left out."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else chosen
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not chosen.elts:
    return None
  picked: Dict[str, Set[str]] = {}
  for element in chosen.elts:
    name = _names.dotted(element.value) or "" if isinstance(
        element, ast.Subscript) else ""
    if not (isinstance(element, ast.Subscript) and (name.isidentifier() or (
        name.startswith("self.") and name.count(".") == 1)) and isinstance(
            element.slice, ast.Constant)):
      return None
    picked.setdefault(name, set()).add(str(element.slice.value))
  passed = {_names.dotted(a) for n in scope.nodes if isinstance(n, ast.Call)
            for a in n.args if isinstance(a, (ast.Name, ast.Attribute))}
  left = False
  for name, keys in picked.items():
    table, home = _table_of(name, scope, analysis)
    if not isinstance(table, ast.Dict) or name not in passed or not all(
        isinstance(v, ast.Call) and (_trainable_variable(v) or "var" in (
            analysis.flow.labels(v, home))) for v in table.values):
      return None
    left = left or len(table.keys) > len(keys)
  return chosen if left and not _rest_trained(scope, set(picked)) else None


def _table_of(name: str, scope: _scopes.Scope, analysis: Analysis
              ) -> Tuple[Optional[ast.expr], _scopes.Scope]:
  """The one value a local name or a `self.` attribute is assigned, and
  where."""
  if name.startswith("self."):
    info = _class_of(scope)
    values = analysis.project.attribute(info, name) if info else []
    return values[0] if len(values) == 1 else (None, scope)
  defs = scope.defs.get(name, [])
  return (defs[0].value if len(defs) == 1 else None), scope


def _rest_trained(scope: _scopes.Scope, tables: Set[str]) -> bool:
  """Whether a step of the function trains a list read from the whole
  dicts (`list(set(weights.values()) - set(head))` at its own rate)."""
  for node in scope.nodes:
    chosen = var_list_of(node) if isinstance(node, ast.Call) and (
        _names.call_name(node) in STEPS) else None
    values: List[ast.AST] = [chosen] if chosen is not None else []
    if isinstance(chosen, ast.Name):
      values += [d.value for d in scope.defs.get(chosen.id, [])]
    if any(isinstance(n, ast.Attribute) and n.attr == "values" and (
        _names.dotted(n.value) in tables)
           for value in values for n in _scopes.walk(value)):
      return True
  return False


def _holds(value: ast.AST, part: str) -> bool:
  """`Sequential([trunk, head2])` holding `head2` among other parts."""
  if not (isinstance(value, ast.Call) and _names.call_name(value) in (
      _CONTAINERS) and value.args and isinstance(value.args[0], (
          ast.List, ast.Tuple))):
    return False
  names = [e.id for e in value.args[0].elts if isinstance(e, ast.Name)]
  return part in names and len(value.args[0].elts) > 1


def _run_beside(chosen: ast.AST, scope: _scopes.Scope, call: ast.Call
                ) -> bool:
  """`_groups.run_beside`, given the steps of the function."""
  return _groups.run_beside(chosen, scope, call, lambda: [
      (n, var_list_of(n)) for n in scope.nodes if isinstance(n, ast.Call)
      and _names.call_name(n) in STEPS])
