"""One training step under a spec: mask -> apply -> restore.

The execution mode is decided here and only here, once per call.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import tensorflow as tf

from tfpartial import _compact
from tfpartial import _mask
from tfpartial import _restore
from tfpartial import _variables
from tfpartial._types import ApplyFn, GradAndVar, GradsAndVars

_EAGER = _restore.EagerPath()
_GRAPH = _restore.GraphPath()


def current_path():
  """The eager path in TF2 code (also inside `tf.function`), else the graph.

  Under `tf.init_scope()`, `tf.function` code reports the eager context it
  was called from, while a TF1 graph reports graph mode.
  """
  with tf.init_scope():
    return _EAGER if tf.executing_eagerly() else _GRAPH


def apply_gradients(spec, grads_and_vars: GradsAndVars, apply: ApplyFn,
                    lazy_rows: bool = False,
                    keep_fully_frozen: bool = False,
                    fused: Optional[Callable[[str], Any]] = None) -> Any:
  """Masks `grads_and_vars`, calls `apply` on them, restores frozen values.

  Args:
    spec: the `FreezeSpec`.
    grads_and_vars: (gradient, variable) pairs, checked before anything runs.
    apply: the optimizer's own apply, given the masked pairs.
    lazy_rows: the optimizer's sparse update writes only the rows its
      `tf.IndexedSlices` gradient names, so only those need restoring.
    keep_fully_frozen: hand fully frozen variables to the optimizer with a
      zero gradient (and restore them) instead of leaving them out, for an
      optimizer built on every variable (Keras' optimizers track their state
      by position, and MultiOptimizer wants every gradient).
    fused: called with the path's name for an update that keeps the
      freeze itself (`_fused_adam`, `_fused_keras`), which returns one or
      None; the variables it `takes` get their gradient unmasked and no
      restore.

  Returns:
    What `apply` returns; in a TF1 graph, an op that runs the whole step.
  """
  pairs = check_grads_and_vars(grads_and_vars)
  spec._check_applies_to([variable for _, variable in pairs])
  path = current_path()
  update = fused(path.name) if fused is not None else None
  guards, applied, in_place = [], [], []
  for grad, variable in pairs:
    selection = spec._selection(variable)
    if selection is None or selection.is_empty:
      applied.append((grad, variable))
    elif selection.is_everything:
      if keep_fully_frozen:
        applied.append((_mask.zeroed(grad), variable))
        if grad is not None:
          guards.append(_restore.DenseGuard(variable, selection))
    elif _compact.is_compact(selection):
      compact_guard = _compact.guard(variable, selection)
      applied.append(
          (_compact.compact_gradient(grad, selection, sparse=lazy_rows),
           compact_guard.small))
      guards.append(compact_guard)
    elif grad is None:
      applied.append((grad, variable))
    elif update is not None and update.takes(grad, variable, selection):
      applied.append((grad, variable))  # The kernel ignores frozen ones.
      in_place.append(variable)
    else:
      applied.append((_mask.mask_gradient(grad, selection), variable))
      if lazy_rows and isinstance(grad, tf.IndexedSlices):
        guards.append(_restore.RowsGuard(variable, selection, grad.indices))
      else:
        guards.append(_restore.DenseGuard(variable, selection))
  if not applied:
    raise ValueError(
        "every variable in `grads_and_vars` is fully frozen by the spec "
        f"({_names(pairs)}); there is nothing to train.")
  gradients = [grad for grad, _ in applied if grad is not None]
  if in_place:
    return path.run(guards, lambda: update.run(lambda: apply(applied)),
                    gradients, in_place)
  return path.run(guards, lambda: apply(applied), gradients)


def substitute(spec, variables):
  """`variables` with each compact table replaced by its compact variable,
  as an optimizer that builds its state up front must see them."""
  substituted = []
  for variable in variables:
    selection = spec._selection(variable)
    if selection is not None and _compact.is_compact(selection):
      variable = _compact.compact_variable(variable, selection)
    substituted.append(variable)
  return substituted


def guard(spec, variables, run) -> Any:
  """Runs `run()`, an update that bypasses gradients, keeping the freeze.

  For what writes variables directly, e.g. Keras EMA finalization.
  """
  guards = []
  for variable in variables:
    selection = spec._selection(variable)
    if selection is not None and _compact.is_compact(selection):
      guards.append(_compact.guard(variable, selection))
    elif selection is not None and not selection.is_empty:
      guards.append(_restore.DenseGuard(variable, selection))
  return current_path().run(guards, run)


def trainable_var_list(spec, var_list) -> List[Any]:
  """`var_list` checked, without the variables `spec` freezes entirely."""
  var_list = tf.nest.flatten(var_list)
  for position, variable in enumerate(var_list):
    _variables.check_variable(variable, f"var_list[{position}]")
  spec._check_applies_to(var_list)
  kept = [v for v in var_list if not spec._fully_frozen(v)]
  if not kept:
    raise ValueError(
        "every variable in `var_list` is fully frozen by the spec ("
        f"{', '.join(_variables.checkpoint_name(v) for v in var_list)}); "
        "there is nothing to train.")
  return kept


def check_grads_and_vars(grads_and_vars: GradsAndVars) -> List[GradAndVar]:
  """The pairs as a list; TypeError or ValueError if one is malformed."""
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
    _check_gradient_shape(grad, variable, position)
    checked.append((grad, variable))
  return checked


def _check_gradient_shape(grad, variable, position: int) -> None:
  if grad is None or isinstance(grad, tf.IndexedSlices):
    return
  shape = getattr(grad, "shape", None)
  if shape is None:
    return
  if not tf.TensorShape(shape).is_compatible_with(variable.shape):
    raise ValueError(
        f"`grads_and_vars[{position}]` pairs a gradient of shape "
        f"{_variables.shape_text(shape)} with "
        f"{_variables.describe(variable)}.")


def _names(pairs) -> str:
  return ", ".join(_variables.checkpoint_name(v) for _, v in pairs)
