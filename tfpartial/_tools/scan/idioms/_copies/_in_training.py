"""When a write into weights runs beside training: in a training hook
(a callback's, a hook's, an optimizer's method), in or before a loop
that trains, or in a function called from such code (`in_training`,
`repeats_with_training`); or once beside a whole Keras `fit`
(`once_beside_fit`), so the weights train on freely, or are done.
Read by `_writes` for every write it classifies."""

from __future__ import annotations

import ast
from typing import Dict, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _hook_lambdas

_TRAINING_BASES = ("Callback", "Hook", "Optimizer", "Constraint", "Pruner",
                   "Pruning", "Wrapper")
# A callback's hooks around evaluation (Keras', Lightning's).
_EVALUATION_HOOKS = ("on_test", "on_predict", "on_evaluat", "on_validation",
                     "on_eval")
TRAINS = _names.TRAIN_STEPS | {"fit", "train_on_batch", "fit_generator",
                                "train_step", "step"}


def in_training(scope: _scopes.Scope, analysis: Analysis,
                node: Optional[ast.AST] = None, depth: int = 0) -> bool:
  """Whether code in `scope` runs while a model trains: a method of a
  callback, hook, optimizer or constraint; code that a step follows (in
  its loop or after it); a function that the project calls from such
  code, or that it does not call at all (a library's, called from
  outside). Module code that nothing trains after only evaluates."""
  if scope.name.startswith(_EVALUATION_HOOKS):
    return False  # `on_test_begin`: the model evaluates, it trains not.
  if scope.cls is not None and (
      any(b.endswith(_TRAINING_BASES) for b in scope.cls.bases)
      or scope.name in _names.OPTIMIZER_METHODS
      or scope.name.startswith(("on_", "after_run", "before_run"))):
    return True
  if node is not None and (loop_trains(scope, analysis, node) or
                           _trains_after(scope, analysis, node)):
    return True
  if _hook_lambdas.training_hook(scope):
    return True
  if depth >= 3 or not isinstance(scope.node, (ast.FunctionDef,
                                               ast.AsyncFunctionDef)):
    return False
  flow = analysis.flow
  callers = [(s, c) for s, c in flow.calls_of(scope.node) if s is not scope]
  if not callers:
    return True
  return any(in_training(s, analysis, c, depth + 1) for s, c in callers)


# Calls that run a whole training at once (Keras').
WHOLE_TRAININGS = {"fit", "fit_generator"}


def after_fit(ordered: Optional[Dict[str, object]]) -> bool:
  """Whether a write is ordered after no step, or after a whole `fit`."""
  at = ordered.get("at") if ordered is not None else None
  return ordered is None or ordered.get("order") == "after" and isinstance(
      at, ast.Call) and _names.call_name(at) in WHOLE_TRAININGS


def once_beside_fit(scope: _scopes.Scope, analysis: Analysis,
                     node: ast.AST, depth: int = 0) -> bool:
  """Whether `node` runs once beside a whole Keras training: in code that
  calls `fit` and no loop around `node` trains, or in a function with no
  step of its own that every caller calls so (a pruning applied once
  before `fit`, or after it: the weights train on freely, or are done)."""
  order = analysis.order(scope)
  current: Optional[ast.AST] = node
  while current is not None and current is not scope.node:
    if isinstance(current, ast.Lambda):
      return False  # `LambdaCallback(on_batch_end=lambda ...)`: each step.
    current = order.parent(current)
  if scope.name.startswith(("on_", "after_run", "before_run")) or (
      _hook_lambdas.training_hook(scope)) or scope.cls is not None and (
          any(b.endswith(_TRAINING_BASES) for b in scope.cls.bases)
          or scope.name in _names.OPTIMIZER_METHODS) or loop_trains(
              scope, analysis, node):
    return False
  calls = analysis.calls(scope)
  if any(_names.call_name(c) in WHOLE_TRAININGS for c in calls):
    return _run_once(scope, analysis)
  if depth >= 2 or not isinstance(scope.node, (
      ast.FunctionDef, ast.AsyncFunctionDef)) or any(
          _names.call_name(c) in TRAINS or order.trains(
              c, scope, analysis.flow) for c in calls):
    return False
  callers = [(s, c) for s, c in analysis.flow.calls_of(scope.node)
             if s is not scope]
  return bool(callers) and all(once_beside_fit(s, analysis, c, depth + 1)
                               for s, c in callers)


def _run_once(scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether code runs once: module code, or a function the project calls
  in no loop (one no code calls may be called each round: a federated
  client's `fit(epochs=1)`; unless it builds each model it fits, so that
  each call trains a new one: a script's `run_training()`)."""
  if not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return True
  callers = [(s, c) for s, c in analysis.flow.calls_of(scope.node)
             if s is not scope]
  if not callers:  # Each call trains a model of its own, made anew.
    return _builds_what_it_fits(scope, analysis)
  return not any(_in_loop(s, analysis, c) for s, c in callers)


# Calls that make a model from one kept elsewhere: called each round (a
# federated client's copy of the global model), each goes on from it.
_CARRIED_OVER = ("load", "clone", "from_", "copy")


def _builds_what_it_fits(scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether every model a function `fit`s is one it builds itself
  (`model = build_resnet20()`, not a parameter, an attribute or a model
  loaded or cloned from one kept between calls)."""
  fitted = [c.func.value for c in analysis.calls(scope)
            if _names.call_name(c) in WHOLE_TRAININGS
            and isinstance(c.func, ast.Attribute)]
  return bool(fitted) and all(
      isinstance(model, ast.Name) and model.id not in scope.params and (
          scope.defs.get(model.id)) and all(
              isinstance(d.value, ast.Call) and not any(
                  w in _names.call_name(d.value).lower()
                  for w in _CARRIED_OVER)
              for d in scope.defs[model.id])
      for model in fitted)


def _in_loop(scope: _scopes.Scope, analysis: Analysis, node: ast.AST
             ) -> bool:
  order = analysis.order(scope)
  current: Optional[ast.AST] = order.parent(node)
  while current is not None and current is not scope.node:
    if isinstance(current, (ast.For, ast.While, ast.AsyncFor)):
      return True
    current = order.parent(current)
  return False


def _repeats_with_training(scope: _scopes.Scope, analysis: Analysis,
                           node: ast.AST, depth: int = 0) -> bool:
  """Whether code runs again with each step: in a training hook
  (`on_batch_end`), in a loop that trains, or in a function called from
  one (a call the flow cannot resolve counts by its spelling)."""
  if scope.name.startswith(_EVALUATION_HOOKS):
    return False
  if scope.cls is not None and scope.name.startswith((
      "on_", "after_run", "before_run")) or loop_trains(
          scope, analysis, node) or _hook_lambdas.training_hook(scope):
    return True
  if depth >= 3 or not isinstance(scope.node, (ast.FunctionDef,
                                               ast.AsyncFunctionDef)):
    return False
  flow = analysis.flow
  project = analysis.project
  calls = [(s, c) for module in project.all_modules_with((scope.name,))
           for s in project.scopes_at(module, module.lines_of((scope.name,)))
           for c in analysis.calls(s) if _names.call_name(c) == scope.name]
  return any(s is not scope and flow.callee(c, s) in (None, scope.node) and (
      _repeats_with_training(s, analysis, c, depth + 1))
             for s, c in calls[:24])


def repeats_with_training(scope: _scopes.Scope, analysis: Analysis,
                          node: ast.AST) -> bool:
  """Whether code runs again with each step (see `_repeats_with_training`)."""
  return _repeats_with_training(scope, analysis, node)


def _trains_after(scope: _scopes.Scope, analysis: Analysis,
                  node: ast.AST) -> bool:
  """Whether a step runs after `node` in its function (the last step of
  each function found once)."""
  last = memo(analysis, "last step").get(id(scope))
  if not isinstance(last, tuple):
    order = analysis.order(scope)
    last = max([(c.lineno, c.col_offset) for c in analysis.calls(scope)
                if _names.call_name(c) in TRAINS or order.trains(
                    c, scope, analysis.flow)], default=(0, -1))
    memo(analysis, "last step")[id(scope)] = last
  start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
  return bool(last > start)


def loop_trains(scope: _scopes.Scope, analysis: Analysis,
                 node: ast.AST) -> bool:
  """Whether a loop around `node` in its function also trains (each loop
  looked at once)."""
  order = analysis.order(scope)
  known = memo(analysis, "loop trains")
  current: Optional[ast.AST] = node
  while current is not None and current is not scope.node:
    if isinstance(current, (ast.For, ast.While, ast.AsyncFor)):
      if id(current) not in known:
        known[id(current)] = any(
            isinstance(inner, ast.Call) and (
                _names.call_name(inner) in TRAINS and not _order.library_fit(
                    inner, scope) or order.trains(
                    inner, scope, analysis.flow) or _runs_step(
                        inner, scope, analysis))
            for inner in ast.walk(current))
      if known[id(current)]:
        return True
    current = order.parent(current)
  return False


def _runs_step(call: ast.Call, scope: _scopes.Scope, analysis: Analysis
               ) -> bool:
  """`session.run(train_op, ...)`: a TF1 loop's step."""
  return _names.call_name(call) == "run" and bool(call.args) and (
      "train" in analysis.flow.ops(call.args[0], scope))


def memo(analysis: Analysis, name: str) -> Dict[int, object]:
  """What the write gates keep under `name`, by the id of what they read
  (one dict per analysis)."""
  found = analysis.once(name, dict)
  assert isinstance(found, dict)
  return found
