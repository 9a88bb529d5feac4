"""Weights read out, zeroed at a selection the object keeps, and written
back: `weights, biases = layer.get_weights()`, `weights[zero_ids] = 0`
with `zero_ids` taken from `self.pruned` (filled when the model was
pruned), then `layer.set_weights([weights, biases])`. Run with each step,
the pruned elements are set back to zeros: a re-mask, nothing saved.

Elements chosen where they are zeroed are not kept: by the values read
out (`weights[np.abs(weights) < t] = 0`, magnitude pruning anew), by a
draw or any other call, or by indices the caller passes. Nor is a reset
that no step runs before (one-shot pruning before the training loop)."""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

_READ_OUTS = {"get_weights", "numpy", "get_value", "read_value"}
# Calls that only walk what an attribute holds (`self.pruned.items()`) or
# turn a kept mask into indices (`np.where(self.mask == 0)`).
_WALKS = {"items", "values", "keys", "get", "zip", "enumerate", "where",
          "nonzero", "argwhere", "flatnonzero", "logical_not", "astype"}


def kept_zeros(value: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `value`, written back, names weights read out in `scope`
  whose elements at a selection kept on `self` were set to zero.

  >>> scope = _scopes.collect(ast.parse('''
  ... def reset(self):
  ...   for layer, ids in self.pruned.items():
  ...     w, b = layer.get_weights()
  ...     w[ids] = 0
  ...     layer.set_weights([w, b])
  ... ''')).children[0]
  >>> kept_zeros(ast.parse("[w, b]").body[0].value, scope)
  True
  """
  elements = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [
      value]
  written = {e.id for e in elements if isinstance(e, ast.Name)}
  read_out = {name for name in written if _read_out(name, scope)}
  if not read_out:
    return False
  return any(_names.is_zero(node.value) and _kept(
      _chosen(node.targets[0], read_out), scope, read_out)
             for node in scope.nodes if isinstance(node, ast.Assign)
             and len(node.targets) == 1)


def after_steps(scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether a caller of `scope` runs a train step before the call, in
  its block or, in a loop, before the next call (by a method of its own
  too: `self._apply_gradient(g)` that calls `apply_gradients`)."""
  return any(place is not scope and (analysis.order(place).step_before(
      site, place, analysis.flow) is not None or _loop_steps(
          site, place, analysis))
             for place, site in analysis.flow.calls_of(scope.node))


def _loop_steps(site: ast.AST, place: _scopes.Scope,
                analysis: Analysis) -> bool:
  """Whether the innermost loop around `site` calls a method of the
  project that runs a step."""
  order = analysis.order(place)
  loop = order.parent(site)
  while loop is not None and not isinstance(loop, (
      ast.For, ast.AsyncFor, ast.While)):
    loop = None if loop is place.node else order.parent(loop)
  if loop is None:
    return False
  for node in ast.walk(loop):
    callee = analysis.flow.callee(node, place) if isinstance(
        node, ast.Call) and isinstance(node.func, ast.Attribute) else None
    if callee is not None and any(
        isinstance(n, ast.Call) and _names.call_name(n) in _names.TRAIN_STEPS
        for n in ast.walk(callee)):
      return True
  return False


def _read_out(name: str, scope: _scopes.Scope) -> bool:
  """Whether each value `name` is bound to is read out of weights."""
  made = [d for d in scope.defs.get(name, []) if d.replaces]
  return bool(made) and all(
      isinstance(d.value, ast.Call) and _names.call_name(d.value) in (
          _READ_OUTS) for d in made)


def _chosen(target: ast.AST, read_out: Set[str]) -> Optional[ast.expr]:
  """The selection of `w[ids] = ...` (`w[0][ids]` too), where `w` is one
  of `read_out`; None for any other target."""
  if not isinstance(target, ast.Subscript):
    return None
  base: ast.expr = target.value
  while isinstance(base, ast.Subscript):
    base = base.value
  if not isinstance(base, ast.Name) or base.id not in read_out:
    return None
  return target.slice


def _kept(chosen: Optional[ast.expr], scope: _scopes.Scope,
          read_out: Set[str]) -> bool:
  """Whether `chosen` comes from attributes of `self` (through the
  function's names and loops; modules aside), read from no weights and by
  no call but the walks of a container or a mask's indices."""
  if chosen is None or isinstance(chosen, (ast.Constant, ast.Slice)):
    return False
  roots: Set[str] = set()
  seen: Set[str] = set()
  pending = [chosen]
  while pending:
    node = pending.pop()
    for each in _reads(node):
      if isinstance(each, ast.Call) and _names.call_name(each) not in _WALKS:
        return False  # A draw, a magnitude, a helper: chosen here.
      if isinstance(each, ast.Attribute) and _made_here(each, scope):
        return False  # `self.ids = ...` beside the write: chosen anew.
      if not isinstance(each, ast.Name) or each.id in seen:
        continue
      seen.add(each.id)
      if each.id in read_out or each.id in scope.params and (
          each.id != "self"):
        return False  # From the weights' values, or passed by the caller.
      made = scope.defs.get(each.id, [])
      if each.id == "self" or not made:
        roots.add(each.id)
      pending += [d.value for d in made]
  return "self" in roots and roots <= {"self", *_scopes.imported_names(
      scope)}


def _made_here(attribute: ast.Attribute, scope: _scopes.Scope) -> bool:
  """Whether `scope` itself sets `attribute` (`self.ids`, or an entry of
  it)."""
  cls = _scopes.enclosing_class(scope)
  dotted = _names.dotted(attribute)
  return cls is not None and dotted is not None and any(
      where is scope for _, where in cls.assigned.get(dotted, []))


def _reads(node: ast.AST) -> Iterator[ast.AST]:
  """The calls, attributes and names `node` reads."""
  return (n for n in ast.walk(node)
          if isinstance(n, (ast.Call, ast.Attribute, ast.Name)))
