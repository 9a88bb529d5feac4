"""One training step under a spec: mask -> apply -> restore.

The execution mode is decided here and only here, once per call.

Every entry point into a step is marked for autograph not to convert it
(`not_converted`): a step holds no Python control flow on tensors, and
converting it (and all it calls) cost a user's first `tf.function` step
most of its trace. The spec's methods (`_spec.py`) and the wrapped
optimizers' methods a user calls (`_v1.py`, `_keras.py`, `_tf_keras.py`)
are marked, each where autograph would otherwise convert it, and so are
the step's own entry points here.
"""

from __future__ import annotations

import logging
from typing import (Any, Callable, List, Optional, Sequence, TypeVar, Union,
                    cast)

import tensorflow as tf

from tfpartial._step import _compact
from tfpartial._frozen import _errors
from tfpartial._kernels import _fused
from tfpartial._step import _lock
from tfpartial._step import _mask
from tfpartial._step import _restore
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Rows
from tfpartial._frozen._types import (ApplyFn, GradAndVar, GradsAndVars,
                                      StepSpec, Variable)

_F = TypeVar("_F", bound=Callable[..., Any])


def not_converted(function: _F) -> _F:
  """`function`, marked for autograph to leave as written
  (`tf.autograph.experimental.do_not_convert`), keeping its type."""
  return cast(_F, tf.autograph.experimental.do_not_convert(function))


_log = logging.getLogger(__name__)

# The compact hint: a row spec training under this fraction of a table of at
# least this many elements, without `compact=True`, is told once a process.
_HINT_FRACTION = 0.01
_HINT_ELEMENTS = 1 << 20
_compact_hinted = False

_EAGER = _restore.EagerPath()
_GRAPH = _restore.GraphPath()


def current_path() -> Union[_restore.EagerPath, _restore.GraphPath]:
  """The eager path in TF2 code (also inside `tf.function`), else the graph.

  Under `tf.init_scope()`, `tf.function` code reports the eager context it
  was called from, while a TF1 graph reports graph mode.
  """
  with tf.init_scope():
    return _EAGER if tf.executing_eagerly() else _GRAPH


@not_converted
def apply_gradients(spec: StepSpec, grads_and_vars: GradsAndVars,
                    apply: ApplyFn, lazy_rows: bool = False,
                    keep_fully_frozen: bool = False,
                    fused: Optional[Callable[[str], Optional[_fused.FusedStep]]]
                    = None) -> Any:
  """Masks `grads_and_vars`, calls `apply` on them, restores frozen values.

  Args:
    spec: what is frozen.
    grads_and_vars: (gradient, variable) pairs, checked before anything runs.
    apply: the optimizer's own apply, `apply(receiver, masked_pairs)`:
      `receiver` is None, or the object a compiled kernel's update must be
      called on (`_fused.FusedStep.receiver`).
    lazy_rows: the optimizer's sparse update writes only the rows its
      `tf.IndexedSlices` gradient names, so only those need restoring.
    keep_fully_frozen: hand fully frozen variables to the optimizer with a
      zero gradient (and restore them) instead of leaving them out, so the
      optimizer keeps state for every variable, as a plain run does.
    fused: called with the path's name, gives the step's compiled kernel
      (`_fused.FusedStep`) or None; the variables it `takes` get their
      gradient unmasked and no restore.

  Returns:
    What `apply` returns; in a TF1 graph, an op that runs the whole step.
  """
  pairs = check_grads_and_vars(grads_and_vars)
  spec.check_applies_to([variable for _, variable in pairs])
  path = current_path()
  update = fused(path.name) if fused is not None else None
  guards: List[_restore.Guard] = []
  applied: List[GradAndVar] = []
  in_place: List[Variable] = []
  for grad, variable in pairs:
    selection = spec.selection(variable)
    if not _compact_hinted:
      _hint_compact(variable, selection)
    if selection is None or selection.is_empty:
      applied.append((grad, variable))
    elif selection.is_everything:
      if not keep_fully_frozen:
        continue
      if (grad is not None and update is not None
          and update.takes(grad, variable, selection)):
        applied.append((grad, variable))  # The kernel keeps all of it.
        in_place.append(variable)
      else:
        applied.append((_mask.zeroed(grad), variable))
        if grad is not None:
          guards.append(_guard(variable, selection, grad, lazy_rows))
    elif selection.compact:
      rows = cast(Rows, selection)  # Only a row selection is compact.
      compact_guard = _compact.guard(variable, rows)
      applied.append(
          (_compact.compact_gradient(grad, rows, sparse=lazy_rows),
           compact_guard.small))
      guards.append(compact_guard)
    elif grad is None:
      applied.append((grad, variable))
    elif update is not None and update.takes(grad, variable, selection):
      applied.append((grad, variable))  # The kernel ignores frozen ones.
      in_place.append(variable)
    else:
      applied.append((_mask.mask_gradient(grad, selection), variable))
      guards.append(_guard(variable, selection, grad, lazy_rows))
  if not applied:
    raise _errors.nothing_to_train("grads_and_vars", [v for _, v in pairs])
  gradients = [grad for grad, _ in applied if grad is not None]

  def run_apply() -> Any:
    if in_place:
      # A variable is in place only where `update` took it.
      result = cast(_fused.FusedStep, update).run(
          lambda receiver: apply(receiver, applied))
    else:
      result = apply(None, applied)
    if tf.executing_eagerly():
      # Eagerly each masked gradient is a live tensor until nothing holds
      # it: let them go before the restore allocates its select (Keras SGD
      # momentum, 50M elements half frozen: peak +3.25 -> +1.25 of the
      # variable above plain). A graph or a function frees them itself.
      applied.clear()
      gradients.clear()
    return result

  graph_lock = bool(guards) or (update is not None and update.needs_lock)
  if not graph_lock and not (update is not None
                             and update.needs_eager_lock):
    return path.run(guards, run_apply, gradients, in_place)
  with _lock.held(gradients, graph=graph_lock) as lock:
    return path.run(guards, run_apply, gradients, in_place, lock)


def _hint_compact(variable: Variable, selection: Any) -> None:
  """Says once a process (a WARNING of the `tfpartial` logger) that compact
  mode exists, when `selection` trains under 1% of the rows of a table of
  2**20 elements or more without it: a step may then read and write the
  whole table for a few rows."""
  global _compact_hinted
  if (not isinstance(selection, Rows) or selection.compact
      or selection.is_empty or selection.size < _HINT_ELEMENTS):
    return
  rows = selection.row_count
  trained = rows - selection.frozen_count // max(selection.row_size, 1)
  if trained >= _HINT_FRACTION * rows:
    return
  _compact_hinted = True
  _log.warning(
      "tfpartial: the spec trains %d of %d rows of %s, and a step may read "
      "and write the whole table for them (wherever the optimizer updates "
      "every row, as Keras' optimizers do). "
      "`tfpartial.train_only(variable, rows, compact=True)` "
      "trains a variable of those rows only: a step then costs in "
      "proportion to them, and so does the optimizer's state, but the "
      "optimizer's checkpoint differs from a plain run's (its slots belong "
      "to the small variable). Said once.", trained, rows,
      _variables.describe(variable))


def _guard(variable: Variable, selection: Any, grad: Any,
           lazy_rows: bool) -> _restore.Guard:
  """The rows of a lazy sparse update, else the whole variable."""
  if lazy_rows and isinstance(grad, tf.IndexedSlices):
    return _restore.RowsGuard(variable, selection, grad.indices)
  return _restore.DenseGuard(variable, selection)


def substitute(spec: StepSpec, variables: Sequence[Variable]) -> List[Variable]:
  """`variables` with each compact table replaced by its compact variable,
  as an optimizer that builds its state up front must see them."""
  substituted = []
  for variable in variables:
    selection = spec.selection(variable)
    if selection is not None and selection.compact:
      variable = _compact.compact_variable(variable, cast(Rows, selection))
    substituted.append(variable)
  return substituted


@not_converted
def guard(spec: StepSpec, variables: Sequence[Variable],
          run: Callable[[], Any]) -> Any:
  """Runs `run()`, an update that bypasses gradients, keeping the freeze.

  For what writes variables directly, e.g. Keras EMA finalization.
  """
  guards: List[_restore.Guard] = []
  for variable in variables:
    selection = spec.selection(variable)
    if selection is not None and selection.compact:
      guards.append(_compact.guard(variable, cast(Rows, selection)))
    elif selection is not None and not selection.is_empty:
      guards.append(_restore.DenseGuard(variable, selection))
  with _lock.held(()) as lock:
    return current_path().run(guards, run, lock=lock)


def checked_var_list(spec: StepSpec, var_list: Any) -> List[Variable]:
  """`var_list` flattened and checked against `spec`."""
  flat: List[Variable] = tf.nest.flatten(var_list)
  for position, variable in enumerate(flat):
    _variables.check_variable(variable, f"var_list[{position}]")
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
  return [(None, v) for v in tf.nest.flatten(var_list)
          if spec.fully_frozen(v)]


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
    _check_gradient_shape(grad, variable, f"`grads_and_vars[{position}]`")
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

