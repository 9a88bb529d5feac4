"""Writes that undo or mirror a step rather than freeze part of it:

- a model's weights swapped for a forward pass and set back before
  any step (`_swapped_back`);
- every variable of the model put back from its copy (`for i in
  range(len(vs)): vs[i].assign(saved[i])` over `model.trainable_variables`;
  `model.set_weights(weights)` with `weights = model.get_weights()` kept
  whole): a line search, a tuner's trial reset; nothing trains less than
  the rest;
- a target network's soft update on NumPy copies (`target_W[i] = tau *
  W[i] + (1 - tau) * target_W[i]` with `W` the trained model's weights),
  written into the target: it mirrors another model, no step trains it;
  the same blend in a graph, from a list a train op trains, or into a
  list copied from its source, or by one number into a variable or
  model no train call names (`(1 - tau) * t.value() + tau * s.value()`,
  `target.set_weights(0.995 * np.array(target.get_weights()) + 0.005 *
  np.array(online.get_weights()))`) (`_target_network`);
- a variable put back whole from a copy taken in the same pass of the
  loop that trains it, after an `assign_add` nudged it, before the
  pass's step (adversarial training, PGD/FGM on an embedding): the
  perturbation undone, every element still trains."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._copies import _swapped_back
from tfpartial._tools.scan.idioms._copies import _target_network

# A model's own list of all its variables.
_WHOLE = {"trainable_variables", "trainable_weights", "variables", "weights"}


def undoes_or_mirrors(call: ast.Call, scope: _scopes.Scope,
                      analysis: Analysis, target: ast.expr,
                      value: ast.expr) -> bool:
  """Whether the write `call` (of `value` into `target`) puts every
  variable of the model back, or writes a blend with another model's
  weights into a model no step trains."""
  if _target_network.scalar_blend(scope, analysis, target, value):
    return True  # A soft update: every element follows another model.
  if _swapped_back.set_back(call, scope, analysis):
    return True  # Swapped for a forward pass, set back before a step.
  if _names.call_name(call) == "set_weights":
    receiver = _names.dotted(target)
    if receiver is None or not isinstance(value, ast.Name):
      return False
    copies = _values(value.id, scope)
    if copies and all(_weights_of(c) == receiver for c in copies) and not (
        _elements_set(value.id, scope)):
      return True  # The whole model set back to its own saved weights.
    return bool(copies) and _blended_with_other(value.id, receiver, scope)
  return _every_element(call, scope, analysis, target) or (
      _target_network.follows_trained(scope, analysis, target, value)) or (
          _target_network.mirrors_its_copy(scope, analysis, target, value))


def _values(name: str, scope: _scopes.Scope) -> List[ast.expr]:
  """What `name` is bound to in `scope` (an element of a tuple unpacked:
  that element)."""
  found: List[ast.expr] = []
  for each in scope.defs.get(name, []):
    value = each.value
    if each.part is not None and isinstance(value, ast.Tuple) and len(
        value.elts) == each.part[1]:
      value = value.elts[each.part[0]]
    elif each.part is not None:
      return []
    found.append(value)
  return found


def _weights_of(node: ast.expr) -> Optional[str]:
  """`X` of `X.get_weights()`."""
  if isinstance(node, ast.Call) and _names.call_name(node) == (
      "get_weights") and isinstance(node.func, ast.Attribute) and not (
          node.args):
    return _names.dotted(node.func.value)
  return None


def _elements_set(name: str, scope: _scopes.Scope) -> List[ast.Assign]:
  """The assignments into elements of `name` (`w[i] = ...`)."""
  return [node for node in scope.nodes if isinstance(node, ast.Assign) and any(
      isinstance(t, ast.Subscript) and _names.root(t) == name
      for t in node.targets)]


def _blended_with_other(name: str, receiver: str,
                        scope: _scopes.Scope) -> bool:
  """Whether every element written into `name` (the receiver's own saved
  weights) adds in another model's saved weights (a soft update)."""
  assigns = _elements_set(name, scope)
  if not assigns:
    return False
  for node in assigns:
    if not isinstance(node.value, ast.BinOp) or not isinstance(
        node.value.op, (ast.Add, ast.Sub)):
      return False
    read = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    others = {_weights_of(v) for r in read - {name}
              for v in _values(r, scope)}
    if not others - {None, receiver}:
      return False
  return True


def _every_element(call: ast.Call, scope: _scopes.Scope,
                   analysis: Analysis, target: ast.expr) -> bool:
  """`vs[i].assign(...)` in `for i in range(len(vs))`, nothing between the
  loop and the write, `vs` the model's whole list of variables."""
  if not isinstance(target, ast.Subscript) or not isinstance(
      target.slice, ast.Name) or not isinstance(target.value, ast.Name):
    return False
  order = analysis.order(scope)
  statement = order.statement_of(call)
  loop = order.parent(statement) if statement is not None else None
  if not isinstance(loop, ast.For) or not isinstance(
      loop.target, ast.Name) or loop.target.id != target.slice.id:
    return False
  listed = target.value.id
  iterated = loop.iter
  if not (isinstance(iterated, ast.Call) and _names.call_name(
      iterated) == "range" and len(iterated.args) == 1 and isinstance(
          iterated.args[0], ast.Call) and _names.call_name(
              iterated.args[0]) == "len" and iterated.args[0].args and (
                  _names.dotted(iterated.args[0].args[0]) == listed)):
    return False
  values = _values(listed, scope)
  return bool(values) and all(isinstance(v, ast.Attribute) and (
      v.attr in _WHOLE) for v in values)


# Writes that change a variable by a step of its own (a perturbation).
_NUDGES = {"assign_add", "assign_sub"}


def undone_before_step(call: ast.Call, scope: _scopes.Scope,
                       analysis: Analysis, target: ast.expr,
                       value: ast.expr, step: object) -> bool:
  """Whether the write puts a whole variable back to a copy of it taken
  earlier in the same pass of the loop that trains it, after nudging it
  (`assign_add`), before that pass's step: an adversarial perturbation
  (PGD, FGM) undone; every element still trains.

  >>> import textwrap
  >>> from tfpartial._tools.scan import _files
  >>> from tfpartial._tools.scan import _project
  """
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    value = value.left  # `copy + r`: the nudge projected around the copy.
  if not isinstance(value, ast.Name) or not isinstance(step, ast.AST):
    return False
  order = analysis.order(scope)
  loop = _loop_of(step, order)
  if loop is None or not _inside(call, loop, order) or (
      call.lineno >= getattr(step, "lineno", 0)):
    return False
  mine = ast.unparse(target)
  copies = [d for d in scope.defs.get(value.id, []) if d.part is None]
  if len(copies) != 1 or not _copy_of(copies[0].value, mine) or not (
      _inside(copies[0].value, loop, order)):
    return False
  taken = copies[0].start
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _NUDGES
             and isinstance(n.func, ast.Attribute) and ast.unparse(
                 n.func.value) == mine and taken < (n.lineno, n.col_offset)
             and n.lineno < call.lineno for n in ast.walk(loop))


def _copy_of(node: ast.expr, mine: str) -> bool:
  """`tf.Variable(x)`, `tf.identity(x)`, `x.read_value()`: a whole copy
  of `x`."""
  if not isinstance(node, ast.Call):
    return False
  name = _names.call_name(node)
  if name in ("Variable", "identity") and len(node.args) == 1:
    return ast.unparse(node.args[0]) == mine
  return name in _names.SNAPSHOTS and isinstance(
      node.func, ast.Attribute) and ast.unparse(node.func.value) == mine


def _loop_of(node: ast.AST, order: "_order.Order") -> Optional[ast.AST]:
  """The innermost loop around `node` in its function."""
  current = order.parent(node)
  while current is not None and not isinstance(current, (
      ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
    if isinstance(current, (ast.For, ast.AsyncFor, ast.While)):
      return current
    current = order.parent(current)
  return None


def _inside(node: ast.AST, outer: ast.AST, order: "_order.Order") -> bool:
  current: Optional[ast.AST] = node
  while current is not None and current is not outer:
    current = order.parent(current)
  return current is outer
