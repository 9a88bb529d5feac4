"""Variables nothing trains: a `tf.Variable` an object makes for itself
in a class that is no layer (no `call`, `build` or `__call__`), in a
module that holds no train step. An attack's perturbation flipped edge
by edge where a gradient is largest, a counter, a state: written by
hand and never trained, so a write into it freezes nothing. A layer's
own weight, or a variable of a module that trains, stays a candidate."""

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
