"""Lists no step is handed: a hand-written update in a loop that a test of
names skips, and the trainable weights a Keras layer declares."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._origins import _origin


def _skipped_updates(analysis: Analysis) -> List[_idiom.Hit]:
  """A hand-written update (`v.assign_sub(lr * g)`) in a loop over the
  variables that a test of their names skips (`if 'emb' in v.name:
  continue`) or guards: whole variables left out of the step."""
  hits: List[_idiom.Hit] = []
  flow = analysis.flow
  for scope, call in analysis.calls_named(("assign_sub", "assign_add")):
    if analysis.module(scope).is_test or not call.args or (
        "grad" not in flow.labels(call.args[0], scope)):
      continue
    order = analysis.order(scope)
    test = _skipping_test(call, order, flow, scope)
    if test is not None:
      hits.append(_idiom.Hit(test, scope, call, {"filtered": test}))
  return hits


# What a Keras layer declares it trains, by the attribute its base reads.
_DECLARED = {"_trainable_weights"}


def _declared_weights(analysis: Analysis) -> List[_idiom.Hit]:
  """A Keras layer declaring as trainable only some of the variables it
  holds (`self._trainable_weights.append(var)` for the variables a name
  test keeps of a hub module's): the others get no update."""
  hits: List[_idiom.Hit] = []
  modules = analysis.project.modules_with(_DECLARED)
  if not modules:
    return hits
  flow = analysis.flow
  for scope, call in analysis.project.calls_named(("append", "extend"),
                                                 modules):
    receiver = call.func.value if isinstance(call.func, ast.Attribute) \
        else None
    if receiver is None or len(call.args) != 1 or analysis.module(
        scope).is_test or (_names.dotted(receiver) or "").split(".")[-1] \
        not in _DECLARED:
      continue
    if _deduplicated(call, receiver, analysis.order(scope), flow, scope):
      continue  # Every weight not listed yet: nothing is left out.
    node = _origin(flow, call.args[0], scope, set())
    if "filtered" in flow.chosen(call.args[0], scope, flow.labels(
        call.args[0], scope)) and isinstance(node, ast.expr):
      hits.append(_idiom.Hit(node, scope, call, {"filtered": node}))
  return hits


# The whole lists of a layer's weights, as Keras names them.
_WHOLE = {"trainable_weights", "trainable_variables", "weights", "variables",
          "non_trainable_weights", "non_trainable_variables"}


def _deduplicated(call: ast.Call, receiver: ast.expr, order: object,
                  flow: Flow, scope: _scopes.Scope) -> bool:
  """Whether `call` appends the variable of its loop under a test that
  only keeps it out of the list twice (`for w in layer.trainable_weights:
  if w not in self._trainable_weights: self._trainable_weights.append(w)`),
  the loop walking a whole list of weights: every weight is declared,
  none left out. A loop over a filtered or sliced list, or a name bound
  to one, is not."""
  parent = getattr(order, "parent")
  test, loop = parent(call), None
  while test is not None and not isinstance(test, ast.If):
    test = parent(test)
  loop = parent(test) if test is not None else None
  added = call.args[0]
  if not isinstance(test, ast.If) or test.orelse or not isinstance(
      loop, (ast.For, ast.AsyncFor)) or not isinstance(added, ast.Name) or (
          not isinstance(loop.target, ast.Name)) or (
              loop.target.id != added.id) or test not in loop.body:
    return False
  compared = test.test
  return isinstance(compared, ast.Compare) and len(compared.ops) == 1 and (
      isinstance(compared.ops[0], ast.NotIn)) and isinstance(
          compared.left, ast.Name) and compared.left.id == added.id and (
              ast.dump(compared.comparators[0]) == ast.dump(receiver)) and (
                  _whole(loop.iter, flow, scope))


def _whole(walked: ast.expr, flow: Flow, scope: _scopes.Scope) -> bool:
  """Whether a loop walks a layer's whole list of weights
  (`i.trainable_weights`, or a name bound only to one), not a slice or
  a list a test chose."""
  values = _scopes.values_reaching(walked, scope)
  return bool(values) and all(
      isinstance(v, ast.Attribute) and v.attr in _WHOLE for v in values) and (
          "filtered" not in flow.chosen(walked, scope, flow.labels(
              walked, scope)))


# The lists a Keras layer or model trains, as `compile` reads them.
_TRAINED = {"trainable_weights", "_trainable_weights"}


def _sliced_weights(analysis: Analysis) -> List[_idiom.Hit]:
  """A layer's trainable list cut to a slice of itself before its model
  is compiled (`d.trainable_weights = d.trainable_weights[1:]`: the
  kernel is dropped, only the bias trains): the weights cut off get no
  update. A slice that keeps every weight (`[0:]`, `[:]`) is not one."""
  hits: List[_idiom.Hit] = []
  for module in analysis.project.modules_with(_TRAINED):
    compiles = [(scope, call) for scope, call in analysis.project.calls_named(
        ("compile",), [module]) if isinstance(call.func, ast.Attribute)]
    for scope in analysis.scopes_with(module, _TRAINED):
      for node in scope.nodes:
        cut = _cut_to_slice(node)
        after = [(s, c) for s, c in compiles
                 if _idiom.position(c) > _idiom.position(node)]
        if cut is not None and after:
          hits.append(_idiom.Hit(cut, scope, after[0][1], {"filtered": cut}))
  return hits


def _cut_to_slice(node: ast.AST) -> Optional[ast.Subscript]:
  """The slice of `x.trainable_weights = x.trainable_weights[1:]` when it
  drops weights: a start past the first or an end.

  >>> _cut_to_slice(ast.parse("d.trainable_weights = d.trainable_weights[1:]"
  ...                         ).body[0]) is not None
  True
  >>> _cut_to_slice(ast.parse("d.trainable_weights = d.trainable_weights[0:]"
  ...                         ).body[0]) is None
  True
  >>> _cut_to_slice(ast.parse("d.trainable_weights = d.trainable_weights["
  ...                         ":len(d.trainable_weights)]").body[0]) is None
  True
  """
  if not isinstance(node, ast.Assign) or len(node.targets) != 1:
    return None
  target, value = node.targets[0], node.value
  read = ast.dump(target).replace("Store()", "Load()")
  if not (isinstance(target, ast.Attribute) and target.attr in _TRAINED
          and isinstance(value, ast.Subscript)
          and isinstance(value.slice, ast.Slice)
          and ast.dump(value.value) == read):
    return None
  cut = value.slice
  start, end = cut.lower, cut.upper
  drops_first = not (start is None or isinstance(start, ast.Constant) and (
      start.value == 0))
  drops_last = end is not None and not (
      isinstance(end, ast.Call) and _names.call_name(end) == "len" and (
          len(end.args) == 1) and ast.dump(end.args[0]) == read)
  return value if cut.step is None and (drops_first or drops_last) else None


def _skipping_test(call: ast.Call, order: object, flow: Flow,
                   scope: _scopes.Scope) -> Optional[ast.expr]:
  """The test of names that skips or guards `call` in its loop."""
  parent = getattr(order, "parent")
  child: ast.AST = call
  current = parent(call)
  while current is not None and current is not scope.node:
    if isinstance(current, ast.If) and not current.orelse and any(
        child is s for s in current.body) and _names.filters_by_name(
            current.test, flow, scope):
      return current.test
    if isinstance(current, (ast.For, ast.AsyncFor)):
      for statement in current.body:
        if statement is child:
          break
        if isinstance(statement, ast.If) and len(statement.body) == 1 and (
            isinstance(statement.body[0], ast.Continue)) and (
                _names.filters_by_name(statement.test, flow, scope)):
          return statement.test
      return None
    child, current = current, parent(current)
  return None
