"""A layer's weights read out, passed through a helper of the project
that writes a number into chosen elements of the array it is given
(`w[c, c, :, i] = -1`, Bayar's constrained convolution) and returns it,
and set back with `set_weights` into the trained model (`self.model`,
its `layers[i]` or `get_layer(...)`) by a Keras callback's hook that
`fit` runs again and again (`on_batch_end`, `on_epoch_end` and their
kin), with no `if`, loop, `return` or `and`/`or` in that hook to make it
run once: those elements are set back to a fixed value after each step
and never learn. Part of `weight-remask`.

Silent: positions the array's own values choose (`w[w < 0] = 0`, a
projection), a helper that only rescales (no element fixed), zeros at
positions the shapes alone give (connectivity, as in `_constraint_fills`),
a write in any other function (`on_train_begin`, a load function), one
under a test in the hook (`if epoch == 0:`), one into another model
(`self.export.layers[0]`), and one of an initial value made there.
The helper's judgement is cached per function, so the work grows with the
number of `set_weights` calls and the helpers they reach."""

from __future__ import annotations

import ast
import functools
from typing import List, Optional, cast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._copies import _writes

# The hooks of a Keras callback that `fit` runs with every batch or epoch.
_EACH_STEP = frozenset({"on_batch_end", "on_train_batch_end",
                        "on_batch_begin", "on_train_batch_begin",
                        "on_epoch_end", "on_epoch_begin"})
# What may make a hook's write run only some times.
_TESTS = (ast.If, ast.IfExp, ast.While, ast.For, ast.Return, ast.Raise,
          ast.Try, ast.BoolOp, ast.With)


def helper_fills(analysis: Analysis) -> List[_writes.WriteHit]:
  """A `weight-remask` hit for each `set_weights` of values made, from the
  weights read out, by a helper that fixes chosen elements to a number."""
  hits: List[_writes.WriteHit] = []
  for scope, call in analysis.calls_named(("set_weights",)):
    if len(call.args) != 1 or analysis.module(scope).is_test or not (
        isinstance(call.func, ast.Attribute)):
      continue
    if not _each_step_hook(scope, analysis) or not _trained_model(
        call.func.value, scope):
      continue
    fill = _filled_by_helper(call.args[0], scope, analysis)
    if fill is None:
      continue
    hits.append(_writes.WriteHit(call, scope, call, {}, "weight-remask",
                                 call.func.value, fill))
  return hits


def _each_step_hook(scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether `scope` is a hook `fit` runs with each batch or epoch, of a
  class deriving (through the project's classes) from Keras' `Callback`,
  with no test, loop or early exit in it."""
  node = scope.node
  if not isinstance(node, ast.FunctionDef) or node.name not in _EACH_STEP \
      or scope.cls is None or not node.args.args:
    return False
  info = scope.cls
  judged = analysis.once(
      f"keras callback {id(info.node)}",
      lambda: any(_keras_callback(c) for c in [
          info, *analysis.project.base_classes(info)]))
  return bool(judged) and not any(
      isinstance(n, _TESTS) for n in ast.walk(node))


def _keras_callback(info: _scopes.ClassInfo) -> bool:
  """Whether a base of `info` is Keras' `Callback`: `tf.keras.callbacks.
  Callback`, `keras.callbacks.Callback`, or `Callback` imported from a
  Keras `callbacks` module."""
  module = info.home.module
  imports = getattr(module, "imports", {})
  for base in info.bases:
    parts = base.split(".")
    if parts[-1] != "Callback":
      continue
    if len(parts) >= 3 and parts[-3:-1] == ["keras", "callbacks"]:
      return True
    origin = imports.get(parts[0])
    if origin is None:
      continue
    where = f"{origin[0]}.{origin[1]}" if origin[1] else origin[0]
    path = where.split(".") + parts[1:]
    if path[-3:] == ["keras", "callbacks", "Callback"] or (
        "keras" in path and path[-2:] == ["callbacks", "Callback"]):
      return True
  return False


def _trained_model(target: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether `target` is the model the callback's `fit` trains: its
  `self.model` (Keras sets it), or a layer of it (`self.model.layers[0]`,
  `self.model.get_layer(...)`), `self` the hook's first parameter."""
  node = cast(ast.FunctionDef, scope.node)
  owner = node.args.args[0].arg
  if owner in scope.defs:
    return False  # `self` rebound in the hook.
  current = target
  if isinstance(current, ast.Subscript):
    current = current.value
    if not (isinstance(current, ast.Attribute) and current.attr == "layers"):
      return False
    current = current.value
  elif isinstance(current, ast.Call):
    if not (isinstance(current.func, ast.Attribute) and (
        current.func.attr == "get_layer")):
      return False
    current = current.func.value
  return isinstance(current, ast.Attribute) and current.attr == "model" and (
      isinstance(current.value, ast.Name) and current.value.id == owner)


def is_number(node: Optional[ast.AST]) -> bool:
  """`-1`, `0.5`: a number spelled in the code."""
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub,
                                                            ast.UAdd)):
    node = node.operand
  return isinstance(node, ast.Constant) and isinstance(
      node.value, (int, float)) and not isinstance(node.value, bool)


def _filled_by_helper(value: ast.AST, scope: _scopes.Scope,
                      analysis: Analysis) -> Optional[ast.AST]:
  """The number a helper of the project writes into the array that
  `value` is made from (through the local names it reads), if any: the
  helper is called on a name and its result is what is written."""
  flow = analysis.flow
  for item in _scopes.made_from(value, scope):
    if not (isinstance(item, ast.Call) and len(item.args) == 1) or (
        flow.callee(item, scope) is None) or not any(
            k.startswith("copy:") for k in flow.labels(item.args[0], scope)):
      continue  # Not the weights read out: an initial value made here.
    function = flow.callee(item, scope)
    if isinstance(function, ast.FunctionDef):
      fill = analysis.once(f"helper fills {id(function)}",
                           functools.partial(_fills_its_argument, function))
      if isinstance(fill, ast.AST):
        return fill
  return None


def _fills_its_argument(function: ast.FunctionDef) -> Optional[ast.AST]:
  """The number `function` writes into elements of its one parameter at
  positions its values do not choose, returning that parameter
  (`def fix(w): w[c, c] = -1; return w`); zeros count only at positions
  spelled as numbers."""
  if len(function.args.args) != 1:
    return None
  weight = function.args.args[0].arg
  returned = [n.value for n in ast.walk(function)
              if isinstance(n, ast.Return)]
  if not returned or not all(isinstance(r, ast.Name) and r.id == weight
                             for r in returned):
    return None
  fill: Optional[ast.AST] = None
  for node in ast.walk(function):
    if isinstance(node, (ast.Assign, ast.AugAssign)) and any(
        isinstance(t, ast.Name) and t.id == weight for t in (
            node.targets if isinstance(node, ast.Assign) else [node.target])):
      return None  # Rebound: what is returned is not the array given.
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
      continue
    target = node.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(
        target.value, ast.Name) and target.value.id == weight) or not (
            is_number(node.value)):
      continue
    if _values_chosen(target.slice, weight):
      return None  # `w[w < 0] = 0`: a projection, chosen anew.
    if _names.is_zero(node.value) and not _literal(target.slice):
      continue  # Zeros where the shapes say: connectivity.
    fill = node.value
  return fill


def _values_chosen(index: ast.AST, weight: str) -> bool:
  """Whether `index` reads the values of `weight`, not only its shape."""
  shaped = set()
  for item in ast.walk(index):
    if isinstance(item, ast.Attribute) and item.attr in {"shape", "ndim",
                                                         "dtype"}:
      shaped |= {id(n) for n in ast.walk(item)}
  return any(isinstance(n, ast.Name) and n.id == weight and id(
      n) not in shaped for n in ast.walk(index))


def _literal(index: ast.AST) -> bool:
  """Whether `index` holds a number spelled in the code (`w[0]`)."""
  return any(is_number(n) for n in ast.walk(index))
