"""Variables nothing trains: a `tf.Variable` an object makes for itself
in a class that is no layer (no `call`, `build` or `__call__`), in a
module that holds no train step. An attack's perturbation flipped edge
by edge where a gradient is largest, a counter, a state: written by
hand and never trained, so a write into it freezes nothing. So is a
`tf.Variable` a function with no step makes anew in each pass of a loop
that fills it (a loss's padding mask): no value of it outlives the
pass. A layer's own weight, or a variable of a module that trains,
stays a candidate."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# Methods that make a class a layer or a model a step trains.
_LAYER_METHODS = {"call", "build", "__call__", "forward"}
# Spellings of a step that trains, in a module's text.
_TRAINING = ("minimize", "apply_gradients", "fit(", "train_on_batch",
             "assign_sub", "ptimizer")


def untrained(target: ast.AST, scope: _scopes.Scope,
              analysis: Analysis) -> bool:
  """Whether `target` (`self.w` or an element of it) is a variable its
  object makes with `tf.Variable` in a class that is no layer, in a
  module with no train step."""
  while isinstance(target, ast.Subscript):
    target = target.value
  info = scope.cls
  name = _names.dotted(target) or ""
  if info is None or not name.startswith("self.") or name.count(".") != 1:
    return False
  if _LAYER_METHODS & set(info.methods) or any(
      word in analysis.module(scope).source.text for word in _TRAINING):
    return False
  made = analysis.project.attribute(info, name)
  return bool(made) and all(
      isinstance(value, ast.Call) and _names.call_name(value) == "Variable"
      for value, _ in made)


# Calls that make or run a step: a function holding one trains.
_STEPS = {"minimize", "apply_gradients", "fit", "train_on_batch",
          "gradient", "gradients", "compute_gradients"}


def made_each_pass(target: ast.AST, scope: _scopes.Scope,
                   analysis: Analysis) -> bool:
  """Whether `target` (an element of a local name) is a `tf.Variable`
  its function makes anew in each pass of a loop that also writes it, a
  function with no step that hands the variable to no function of the
  project: a buffer filled for one pass (a loss's padding mask zeroed
  element by element, then stacked), whose values no step carries on."""
  while isinstance(target, ast.Subscript):
    target = target.value
  if not isinstance(target, ast.Name):
    return False
  defs = scope.defs.get(target.id, [])
  if len(defs) != 1 or not isinstance(defs[0].value, ast.Call) or (
      _names.call_name(defs[0].value) != "Variable") or (
          not defs[0].where.loops):
    return False
  loops = [n for n in ast.walk(scope.node) if isinstance(
      n, (ast.For, ast.While)) and id(n) in defs[0].where.loops]
  calls = [n for n in scope.nodes if isinstance(n, ast.Call)]
  return bool(loops) and all(
      any(n is target for n in ast.walk(loop)) for loop in loops) and not (
          any(_names.call_name(c) in _STEPS for c in calls)) and not any(
              analysis.project.resolve(scope, _names.dotted(c.func) or "")
              is not None and any(isinstance(a, ast.Name) and a.id == (
                  target.id) for a in c.args) for c in calls)
