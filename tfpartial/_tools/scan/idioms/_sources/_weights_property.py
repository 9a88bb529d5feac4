"""A layer or model that overrides its `trainable_weights` (or
`trainable_variables`) property to return, while a switch is on, only
some of its weights (`if self.pretrain_activations: return
self.pretrainable_weights`) and, otherwise, all of them (`return
super().trainable_weights`): every optimizer that reads the property
trains that part only, the others left out whole. An override that
always returns all the weights, adds some (`super().trainable_weights +
extra`) or returns none while the layer is frozen (`[]`) is not a part,
nor is one with no switch (no `if` on an attribute of `self`), nor a
wrapper that makes no weights of its own and returns its inner layer's
(`return self.layer.trainable_weights`). Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom

# The properties an optimizer (or `fit`) reads for what trains.
_PROPERTIES = ("trainable_weights", "trainable_variables")
# The label of such a hit: the `return super().X` that returns them all.
WHOLE = "whole property"
# The layer's own lists: a value read from one returns all its weights.
_OWN = frozenset({"trainable_weights", "trainable_variables",
                  "_trainable_weights", "weights", "variables"})


def narrowed_properties(analysis: Analysis) -> List[_idiom.Hit]:
  """The part each such override returns, where it returns it."""
  hits: List[_idiom.Hit] = []
  for scope in analysis.project.functions_named(_PROPERTIES, unscanned=True):
    function = scope.node
    if not isinstance(function, ast.FunctionDef) or not any(
        isinstance(d, ast.Name) and d.id == "property"
        for d in function.decorator_list) or analysis.module(scope).is_test:
      continue
    returned = [r.value for r in _scopes.walk(function)
                if isinstance(r, ast.Return) and r.value is not None]
    whole = [v for v in returned if _super_property(v, function.name)]
    inner = not _makes_weights(scope)
    shown = [None if inner and _inner_whole(v) else _part(v, scope)
             for v in returned if v not in whole]
    if len(whole) == 1 and shown and all(n is not None for n in shown) and (
        _switched(function)):
      node = shown[0]
      assert node is not None
      hits.append(_idiom.Hit(node, scope, None, {WHOLE: whole[0]}))
  return hits


def _switched(function: ast.FunctionDef) -> bool:
  """Whether an `if` of `function` tests an attribute of `self` (a flag:
  `if self.pretrain_activations:`), the switch choosing the part."""
  return any(isinstance(node, (ast.If, ast.IfExp)) and any(
      isinstance(each, ast.Attribute) and isinstance(each.value, ast.Name)
      and each.value.id == "self" for each in ast.walk(node.test))
             for node in _scopes.walk(function))


def _inner_whole(value: ast.expr) -> bool:
  """`self.layer.trainable_weights`: a held layer's whole list."""
  return isinstance(value, ast.Attribute) and value.attr in _PROPERTIES and (
      isinstance(value.value, ast.Attribute)) and isinstance(
          value.value.value, ast.Name) and value.value.value.id == "self"


def _makes_weights(scope: _scopes.Scope) -> bool:
  """Whether the class the property is in makes weights of its own
  (`self.add_weight(...)`, `tf.Variable(...)`)."""
  cls = _scopes.enclosing_class(scope)
  if cls is None:
    return True  # Not known: keep the finding.
  return any(isinstance(node, ast.Call) and _names.call_name(node) in (
      "add_weight", "add_variable", "Variable", "get_variable")
             for node in ast.walk(cls.node))


def _super_property(value: ast.expr, name: str) -> bool:
  """`super().trainable_weights` (or `super(Layer, self)`'s)."""
  return isinstance(value, ast.Attribute) and value.attr == name and (
      isinstance(value.value, ast.Call)) and isinstance(
          value.value.func, ast.Name) and value.value.func.id == "super"


def _part(value: ast.expr, scope: _scopes.Scope) -> Optional[ast.expr]:
  """Where a returned value that is none of the layer's own lists is
  made (its one assignment that replaces it, or what fills it when that
  is an empty list; else the value), or None for one made from
  them, from `super()`, or an empty list."""
  if _empty(value):
    return None
  for node in _scopes.made_from(value, scope):
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Name) and node.func.id == "super":
      return None
    if isinstance(node, ast.Attribute) and node.attr in _OWN and (
        isinstance(node.value, ast.Name)) and node.value.id == "self":
      return None
  if isinstance(value, ast.Name):
    defs = scope.defs.get(value.id, [])
    made = [d.value for d in defs if d.replaces]
    added = [d.value for d in defs if not d.replaces]
    if len(made) == 1 and _empty(made[0]) and added:
      return added[0]  # `part = []`, then filled: where it is filled.
    if len(made) == 1:
      return made[0]
  return value


def _empty(value: ast.expr) -> bool:
  """`[]` or `()`."""
  return isinstance(value, (ast.List, ast.Tuple)) and not value.elts
