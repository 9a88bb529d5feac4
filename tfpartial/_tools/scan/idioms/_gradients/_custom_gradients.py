"""A weight's gradient masked by a `tf.custom_gradient` function: the
function's gradient (`def grad(dy): return dy * mask`) multiplies what
flows back by a mask, zeroes rows, or keeps some with `tf.where`, and
the function is applied to a variable (`frozen_rows(self.table)`), so the
masked elements get no update; or it scales what flows back by a rate
that the function making it takes, and its calls pass 0 to some and a
rate picked per layer to others (`scaled(rates[i])(block(x))`, gradual
unfreezing; `_zero_choice`): the layers under a rate of 0 get no update.
A custom gradient that clips, reverses or passes the gradient through,
cuts it where its own input saturates (a straight-through estimator's
`dy * tf.cast(tf.abs(x) <= 1, tf.float32)`), or
one applied to activations by a rate never 0 or not picked per layer (a
gradient reversal's schedule), freezes nothing.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _zero_choice
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels


def masked(analysis: Analysis) -> List[Tuple[_scopes.Scope, Labels]]:
  """(the gradient function, its labels) of each custom gradient that
  masks what flows back and is applied to a variable, or scales it by a
  rate picked per layer that can be 0."""
  found: List[Tuple[_scopes.Scope, Labels]] = []
  for module in analysis.project.all_modules_with(("custom_gradient",)):
    if module.tree is None or module.is_test:
      continue
    for scope in analysis.scopes_with(module, ("custom_gradient",)):
      for function in _decorated(scope):
        labels = [each for grad in _gradients(function)
                  for each in _masked_returns(analysis, grad)]
        if labels and _applied_to_a_variable(analysis, function):
          found.append(labels[0])
        elif not labels:
          labels = [(grad, {"masked": product})
                    for grad in _gradients(function)
                    for product in _rates_chosen(analysis, grad)]
          found += labels[:1]
  return found


def _decorated(scope: _scopes.Scope) -> Iterator[_scopes.Scope]:
  """The functions defined in `scope`, or nested deeper, under
  `@tf.custom_gradient`."""
  todo = list(scope.children)
  while todo:
    child = todo.pop()
    todo.extend(child.children)
    node = child.node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        _names.call_name(d) == "custom_gradient" if isinstance(d, ast.Call)
        else (_names.dotted(d) or "").split(".")[-1] == "custom_gradient"
        for d in node.decorator_list):
      yield child


def _gradients(function: _scopes.Scope) -> Iterator[_scopes.Scope]:
  """The gradient functions `function` returns (`return y, grad`)."""
  returned = {n.id for node in function.nodes
              if isinstance(node, ast.Return) and isinstance(
                  node.value, ast.Tuple) and node.value.elts
              for n in [node.value.elts[-1]] if isinstance(n, ast.Name)}
  for child in function.children:
    if isinstance(child.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
        child.node.name in returned):
      yield child


def _masked_returns(analysis: Analysis, grad: _scopes.Scope
                    ) -> Iterator[Tuple[_scopes.Scope, Labels]]:
  """`grad` with the labels of a return that masks what flows back."""
  node = grad.node
  assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
  given = [*node.args.args, *([node.args.vararg] if node.args.vararg
                              else [])]
  if not given:
    return
  upstream = given[0]
  forward = _parameters(grad.parent.node) if grad.parent else []
  bound = _bound(grad)  # Once per gradient function, not per `return`.
  for each in grad.nodes:
    if isinstance(each, ast.Return) and each.value is not None and not (
        _saturation(each.value, upstream.arg, forward, bound)):
      labels = analysis.flow.labels(each.value, grad,
                                    {upstream.arg: {"grad": upstream}})
      if "masked" in labels:
        yield grad, labels


# The comparisons of order: a range test, not a test of chosen elements.
_ORDERS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_ORDER_CALLS = {"less", "less_equal", "greater", "greater_equal"}


def _saturation(value: ast.expr, upstream: str, forward: List[str],
                bound: Optional[Dict[str, List[ast.expr]]] = None) -> bool:
  """Whether `value` is `dy * m` with `m` a range test of the forward
  function's own input (`tf.cast(tf.abs(x) <= 1, tf.float32)`, `-1 < x <
  1`), or a local name bound only to such tests (`bound`: `mask = ...;
  return dy * mask * 0.5`), other factors being numbers: a
  straight-through estimator cut where the input saturates, computed
  anew from the values every call; no element is chosen.

  >>> grad = ast.parse("dy * tf.cast(-1 < x < 1.0, tf.float32)").body[0]
  >>> _saturation(grad.value, "dy", ["x"])
  True
  >>> _saturation(ast.parse("dy * mask").body[0].value, "dy", ["x"])
  False
  >>> test = ast.parse("tf.cast(tf.abs(x) <= 1.0, dy.dtype)").body[0].value
  >>> _saturation(ast.parse("dy * mask * 0.5").body[0].value, "dy", ["x"],
  ...             {"mask": [test]})
  True
  """
  factors = _factors(value)
  if factors is None:
    return False
  named = [f for f in factors if isinstance(f, ast.Name) and f.id == upstream]
  tests = [f for f in factors if not any(f is n for n in named) and not (
      isinstance(f, ast.Constant) and isinstance(f.value, (int, float)))]
  if len(named) != 1 or not tests:
    return False
  return all(all(_range_test(v, forward) for v in bound[test.id]) if (
      isinstance(test, ast.Name) and bound and bound.get(test.id)) else (
          _range_test(test, forward)) for test in tests)


def _factors(value: ast.expr) -> Optional[List[ast.expr]]:
  """The factors of a product (`dy * mask * 0.5`), or None."""
  if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
    return None
  found: List[ast.expr] = []
  for side in (value.left, value.right):
    inner = _factors(side)
    found += inner if inner is not None else [side]
  return found


def _bound(grad: _scopes.Scope) -> Dict[str, List[ast.expr]]:
  """The values each local name of the gradient function is bound to."""
  return {name: [d.value for d in defs] for name, defs in grad.defs.items()
          if all(isinstance(d.value, ast.expr) for d in defs)}


def _range_test(test: ast.expr, forward: List[str]) -> bool:
  """Whether `test` keeps only the inner interval of the forward
  function's own input values (`tf.abs(x) <= 1`, `-1 < x < 1`): no
  equality, no outer side (`tf.abs(x) > 0`, the same elements as `x !=
  0`), no read through shape, size or range calls (`tf.range(tf.shape(
  x)[0]) >= 3`, rows chosen by position).

  >>> def ok(text):
  ...   return _range_test(ast.parse(text).body[0].value, ["x"])
  >>> ok("tf.abs(x) <= 1.0"), ok("-1 < x < 1"), ok("tf.abs(x) > 0")
  (True, True, False)
  >>> ok("tf.range(tf.shape(x)[0]) >= 3"), ok("tf.abs(x) <= 0")
  (False, False)
  >>> ok("tf.abs(x) < 1e-8"), ok("-1e-8 < x < 1e-8")
  (False, False)
  """
  heads = {id(n.value) for n in ast.walk(test) if isinstance(
      n, ast.Attribute)}  # `tf` of `tf.cast`: a module, not a value.
  read = {n.id for n in ast.walk(test) if isinstance(n, ast.Name) and (
      id(n) not in heads)}
  orders = [n for n in ast.walk(test) if isinstance(n, ast.Compare) and all(
      isinstance(o, _ORDERS) for o in n.ops) or isinstance(
          n, ast.Call) and _names.call_name(n) in _ORDER_CALLS]
  equal = [n for n in ast.walk(test) if isinstance(n, ast.Compare) and (
      not all(isinstance(o, _ORDERS) for o in n.ops)) or isinstance(
          n, ast.Call) and _names.call_name(n) in ("equal", "not_equal")]
  shaped = [n for n in ast.walk(test) if isinstance(n, ast.Call) and (
      _names.call_name(n) in _SHAPE_CALLS) or isinstance(
          n, ast.Attribute) and n.attr in ("shape", "size")]
  return bool(orders) and not equal and not shaped and bool(read) and (
      read <= set(forward)) and all(_inner(o) for o in orders)


# Calls that read a tensor's layout, not its values.
_SHAPE_CALLS = {"shape", "size", "range", "rank", "shape_n", "len"}


def _inner(order: ast.expr) -> bool:
  """Whether an order test keeps an inner interval: a chain `lo < x <
  hi` going one way, or `abs(x)` on the small side of a bound; every
  bound a number of at least 1e-3 written there (not `tf.abs(x) < 1e-8`,
  `<= epsilon() * 10`, `< FLAGS.eps`: maybe a float-safe `x == 0`)."""
  if isinstance(order, ast.Compare):
    ops = order.ops
    if len(ops) == 2:
      return (all(isinstance(o, (ast.Lt, ast.LtE)) for o in ops) or all(
          isinstance(o, (ast.Gt, ast.GtE)) for o in ops)) and not any(
              _tiny(b) for b in (order.left, order.comparators[1]))
    small, large = (order.left, order.comparators[0]) if isinstance(
        ops[0], (ast.Lt, ast.LtE)) else (order.comparators[0], order.left)
  elif isinstance(order, ast.Call) and len(order.args) == 2:
    first, second = order.args
    small, large = (first, second) if _names.call_name(order) in (
        "less", "less_equal") else (second, first)
  else:
    return False
  return _is_abs(small) and not _is_abs(large) and not _tiny(large)


def _tiny(bound: ast.expr) -> bool:
  """Whether a bound may be 0 or near it: anything but a number of at
  least 1e-3 in size written there (`1e-8`, `epsilon()`, `epsilon() *
  10`, `FLAGS.prune_eps`, a parameter: a float-safe `x == 0` for all the
  scan knows).

  >>> [_tiny(ast.parse(t).body[0].value) for t in ("1e-8", "-1e-8", "0",
  ...      "0.5", "-1", "K.epsilon()", "K.epsilon() * 10", "FLAGS.eps")]
  [True, True, True, False, False, True, True, True]
  """
  if isinstance(bound, ast.UnaryOp) and isinstance(bound.op, ast.USub):
    bound = bound.operand
  return not (isinstance(bound, ast.Constant) and isinstance(
      bound.value, (int, float)) and not isinstance(bound.value, bool) and (
          abs(bound.value) >= 1e-3))


def _is_abs(node: ast.expr) -> bool:
  return isinstance(node, ast.Call) and (
      _names.call_name(node) == "abs")


def _rates_chosen(analysis: Analysis, grad: _scopes.Scope
                  ) -> Iterator[ast.BinOp]:
  """The products of what flows back and a rate that the function making
  the custom gradient takes (`def scaled(rate): ... return dy * rate`),
  where its calls pass 0 to some and pick the rate per layer for others
  (`scaled(rates[i])`): the layers under a rate of 0 get no update."""
  node = grad.node
  assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
  if not node.args.args:
    return
  upstream = node.args.args[0].arg
  for each in grad.nodes:
    if isinstance(each, ast.BinOp) and isinstance(each.op, ast.Mult):
      sides = [each.left, each.right]
      names = [s.id for s in sides if isinstance(s, ast.Name)]
      if upstream in names and len(names) == 2 and names[0] != names[1]:
        rate = names[1] if names[0] == upstream else names[0]
        if _zero_choice.passed_zero_by_choice(
            _passed(analysis, grad, rate)):
          yield each


def _passed(analysis: Analysis, grad: _scopes.Scope, rate: str
            ) -> List[ast.expr]:
  """What the project's calls pass the parameter `rate` of the function
  around `grad` that takes it."""
  outer = grad.parent
  while outer is not None and rate not in _parameters(outer.node):
    outer = outer.parent
  if outer is None:
    return []
  return [value for value, _ in _zero_choice.passed(rate, outer,
                                                    analysis.project)]


def _parameters(node: ast.AST) -> List[str]:
  if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return []
  return [a.arg for a in node.args.args]


def _applied_to_a_variable(analysis: Analysis,
                           function: _scopes.Scope) -> bool:
  """Whether a call of `function` is given a variable first (there, or
  through a parameter of the caller)."""
  name = function.node.name if isinstance(
      function.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""
  project = analysis.project  # A layer's file may name no step.
  for scope, call in project.calls_named((name,), project.all_modules_with(
      (name,))):
    if call.args and (_calls.variables_in(
        analysis.flow, call.args[0], scope, {}) or "var" in (
            analysis.flow.sink_labels(call.args[0], scope, "var"))):
      return True
  return False
