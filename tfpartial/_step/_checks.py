"""The step's input, checked before anything runs: pairs, lists, var_list.

Each check raises a `TypeError` or `ValueError` naming the argument, the
variable and its shape, so that a bad call changes nothing (guarantee 9).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import tensorflow as tf

from tfpartial._frozen import _errors
from tfpartial._frozen import _tables
from tfpartial._frozen import _variables
from tfpartial._frozen._types import (GradAndVar, GradsAndVars, StepSpec,
                                      Variable)


def checked_var_list(spec: StepSpec, var_list: Any) -> List[Variable]:
  """`var_list` flattened and checked against `spec`, each sharded table
  in it replaced by its parts (the variables an optimizer trains)."""
  flat: List[Variable] = tf.nest.flatten(var_list)
  for position, variable in enumerate(flat):
    _variables.check_variable(variable, f"var_list[{position}]",
                              tables=True)
  flat = _tables.expand(flat)
  spec.check_applies_to(flat)
  if all(spec.fully_frozen(v) for v in flat):
    raise _errors.nothing_to_train("var_list", flat)
  return flat


def trainable_var_list(spec: StepSpec, var_list: Any) -> List[Variable]:
  """`var_list` checked, without the variables `spec` freezes entirely."""
  return [v for v in checked_var_list(spec, var_list)
          if not spec.fully_frozen(v)]


def left_out(spec: StepSpec, var_list: Any) -> List[GradAndVar]:
  """`(None, variable)` for each variable of `var_list` that `spec` freezes
  entirely: `spec.minimize` computes no gradient for them, but hands them
  to the step, which checks the spec against every variable given (a spec
  of whole variables only names none of the others) and leaves them out."""
  return [(None, v) for v in _tables.expand(tf.nest.flatten(var_list))
          if spec.fully_frozen(v)]


def check_grads_and_vars(grads_and_vars: GradsAndVars,
                         spec: Optional[StepSpec] = None) -> List[GradAndVar]:
  """The pairs as a list; TypeError or ValueError if one is malformed.

  With `spec`, a gradient whose shape is not its variable's, among pairs
  with a variable the spec freezes entirely, says that `mask_gradients`
  leaves such pairs out (the likeliest way to misalign them).
  """
  checked = pairs_of(grads_and_vars)
  for position, (grad, variable) in enumerate(checked):
    try:
      _check_gradient_shape(grad, variable, f"`grads_and_vars[{position}]`")
    except ValueError as error:
      dropped = [] if spec is None else [
          v for _, v in checked if spec.fully_frozen(v)]
      if not dropped:
        raise
      raise _errors.dropped_by_mask_gradients(str(error), dropped) from None
  return checked


def pairs_of(grads_and_vars: GradsAndVars) -> List[GradAndVar]:
  """The pairs as a list, each a (gradient, variable) pair of a variable;
  their shapes are `check_grads_and_vars`' to check."""
  if isinstance(grads_and_vars, dict):
    raise TypeError(
        "`grads_and_vars` must be (gradient, variable) pairs, e.g. "
        "`zip(grads, variables)`; got a dict.")
  try:
    pairs = list(grads_and_vars)
  except TypeError:
    raise TypeError(
        "`grads_and_vars` must be an iterable of (gradient, variable) pairs; "
        f"got {type(grads_and_vars).__name__}.") from None
  checked = []
  for position, pair in enumerate(pairs):
    try:
      grad, variable = pair
    except (TypeError, ValueError):
      raise TypeError(
          f"`grads_and_vars[{position}]` must be a (gradient, variable) pair; "
          f"got {type(pair).__name__}.") from None
    _variables.check_variable(variable, f"grads_and_vars[{position}][1]")
    checked.append((grad, variable))
  return checked


def check_aligned(gradients: Sequence[Any],
                  variables: Sequence[Variable]) -> List[GradAndVar]:
  """Gradients and variables paired by position; ValueError or TypeError
  when they are not the same length or an entry is malformed."""
  gradients, variables = list(gradients), list(variables)
  if len(gradients) != len(variables):
    raise _errors.misaligned(len(gradients), len(variables))
  for position, (grad, variable) in enumerate(zip(gradients, variables)):
    _variables.check_variable(variable, f"variables[{position}]")
    _check_gradient_kind(grad, f"`gradients[{position}]`")
    _check_gradient_shape(grad, variable, f"`gradients[{position}]`")
  return list(zip(gradients, variables))


def _check_gradient_kind(grad: Any, where: str) -> None:
  """TypeError unless `grad` is None, `tf.IndexedSlices` or a float
  tensor: a (gradient, variable) pair here means the lists are mixed up."""
  if grad is None or isinstance(grad, tf.IndexedSlices):
    return
  try:
    dtype = tf.as_dtype(getattr(grad, "dtype", None))
  except TypeError:
    dtype = None
  if dtype is not None and (dtype.is_floating or dtype.is_complex):
    return
  got = type(grad).__name__ + ("" if dtype is None else f" of {dtype.name}")
  raise TypeError(
      f"{where} must be a gradient (a float tensor, tf.IndexedSlices or "
      f"None); got {got}. `spec.mask` takes the gradients and the variables "
      "as two lists; for (gradient, variable) pairs use "
      "`spec.mask_gradients`.")


def _check_gradient_shape(grad: Any, variable: Variable, where: str) -> None:
  if grad is None or isinstance(grad, tf.IndexedSlices):
    return
  shape = getattr(grad, "shape", None)
  if shape is None:
    return
  if not tf.TensorShape(shape).is_compatible_with(variable.shape):
    raise ValueError(
        f"{where} pairs a gradient of shape {_variables.shape_text(shape)} "
        f"with {_variables.describe(variable)}.")

