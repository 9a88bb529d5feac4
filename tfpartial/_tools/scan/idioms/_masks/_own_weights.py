"""A Keras layer's own weight read back by position in one of its
methods (`self.trainable_variables[0]`, `self.weights[1]`), in a class
that makes its weights with `add_weight` without binding them to names:
that element is a weight that trains (none made with `trainable=False`,
which would shift the positions of the trainable ones)."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# The lists a layer keeps of its own weights, in the order it made them.
_OWN_LISTS = {"trainable_variables", "trainable_weights", "weights",
              "variables"}


def own_weight(variable: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether `variable` is `self.<list>[k]` (`k` a constant) in a method
  of a class whose weights are all made to train by `add_weight`."""
  if not isinstance(variable, ast.Subscript) or not isinstance(
      variable.slice, ast.Constant) or not isinstance(
          variable.slice.value, int):
    return False
  owner = variable.value
  if not isinstance(owner, ast.Attribute) or owner.attr not in (
      _OWN_LISTS) or not isinstance(owner.value, ast.Name) or (
          owner.value.id != "self") or scope.cls is None:
    return False
  made = [n for n in ast.walk(scope.cls.node) if isinstance(n, ast.Call)
          and _names.call_name(n) == "add_weight"]
  return bool(made) and not any(
      k.arg == "trainable" and not (isinstance(k.value, ast.Constant) and (
          k.value.value is True)) for n in made for k in n.keywords)
