"""What counts as a variable, how it is keyed, named and described in errors."""

from __future__ import annotations

from typing import Hashable, Tuple, TypeGuard

import tensorflow as tf

from tfpartial._frozen import _compat
from tfpartial._frozen import _tables
from tfpartial._frozen._types import KerasVariable, Variable

_KERAS_VARIABLES = _compat.keras_variable_types()


def is_variable(value: object) -> TypeGuard[Variable]:
  """Whether `value` is a variable tfpartial can freeze part of."""
  return isinstance(value, (tf.Variable,) + _KERAS_VARIABLES)


def is_keras(variable: object) -> TypeGuard[KerasVariable]:
  """Whether `variable` is a Keras 3 variable (which wraps a tf.Variable)."""
  return bool(_KERAS_VARIABLES) and isinstance(variable, _KERAS_VARIABLES)


def is_table(value: object) -> TypeGuard[Variable]:
  """Whether `value` is a sharded table (`_tables`): a TF1 partitioned
  variable or a TF2 sharded one, which a spec takes as one variable."""
  return _tables.is_table(value)


def key(variable: Variable) -> Hashable:
  """A hashable identity for `variable`, equal for every handle on it."""
  if is_table(variable):
    return _tables.key(variable)
  if is_keras(variable):
    return ("keras", id(variable))  # Keras variables compare elementwise.
  # Not a Keras variable: `storage` is the variable itself, a tf.Variable.
  reference: Hashable = storage(variable).ref()
  return reference


def storage(variable: Variable) -> tf.Variable:
  """The tf.Variable holding `variable`'s value, for reads and assigns.

  A Keras variable's `value` is its tf.Variable (or distributed variable);
  it would only be cast inside a layer's autocast scope, never in a step.
  """
  return variable.value if is_keras(variable) else variable


def checkpoint_name(variable: Variable) -> str:
  """The name a checkpoint knows `variable` by: `x` for the TF1 `x:0`,
  a Keras variable's `path`."""
  if is_keras(variable):
    return variable.path
  if is_table(variable):
    return _tables.name(variable)
  name: str = getattr(variable, "name", None) or "<unnamed>"
  return name[:-2] if name.endswith(":0") else name


def shape_text(shape: object) -> str:
  """`(2, 3)` for a known shape, TensorFlow's own text otherwise."""
  try:
    known = tf.TensorShape(shape)
  except (TypeError, ValueError):
    return "<unknown>"
  if known.rank is None:
    return "<unknown>"
  return str(tuple(known.as_list()))


def static_shape(variable: Variable) -> Tuple[int, ...]:
  """The fully known shape of `variable`; ValueError if it is not known."""
  shape = tf.TensorShape(variable.shape)
  if not shape.is_fully_defined():
    raise ValueError(
        f"{describe(variable)} is not fully known; tfpartial needs the full "
        "shape to select elements.")
  return tuple(shape.as_list())


def describe(variable: Variable) -> str:
  """`variable 'x' of shape (2, 3)`, the way error messages name a variable
  (`... in 4 parts` for a sharded table)."""
  parts = (f" in {_tables.describe_parts(variable)}" if is_table(variable)
           else "")
  return (f"variable '{checkpoint_name(variable)}' of shape "
          f"{shape_text(getattr(variable, 'shape', None))}{parts}")


def check_variable(value: object, argument: str = "variable",
                   tables: bool = False) -> None:
  """Raises TypeError unless `value` is a variable (or, with `tables`, a
  sharded table)."""
  if is_variable(value) or (tables and is_table(value)):
    return
  if is_table(value):
    raise TypeError(
        f"`{argument}` is {describe(value)}, a sharded table; a gradient "
        "belongs to one of its parts: pass the parts (`list(table)` for "
        "a TF1 partitioned variable, `table.variables` for a "
        "ShardedVariable), as the optimizer trains them.")
  detail = type(value).__name__
  name, shape = getattr(value, "name", None), getattr(value, "shape", None)
  if name is not None:
    detail += f" '{name}'"
  if shape is not None:
    detail += f" of shape {shape_text(shape)}"
  raise TypeError(
      f"`{argument}` must be a tf.Variable (resource, TF1 ref or "
      f"distributed variable) or a Keras variable; got {detail}.")
