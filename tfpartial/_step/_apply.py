"""One training step under a spec: check -> plan -> run.

`apply_gradients` checks the pairs (`_checks`), plans what happens to each
variable (`_plan`), then runs the plan: mask the gradients (`_mask`), let
the optimizer apply them (through a compiled kernel where one takes a
variable), and restore the frozen elements (`_restore`, `_compact`) under
the step lock (`_lock`). The execution mode is decided once per call
(`_mode.current_path`).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence

import tensorflow as tf

from tfpartial._frozen import _errors
from tfpartial._frozen._types import (ApplyFn, GradAndVar, GradsAndVars, Mode,
                                      StepSpec, Variable)
from tfpartial._kernels import _fused
from tfpartial._step import _checks
from tfpartial._step import _compact
from tfpartial._step import _hint
from tfpartial._step import _lock
from tfpartial._step import _mask
from tfpartial._step import _mode
from tfpartial._step import _plan
from tfpartial._step import _restore
from tfpartial._step._mode import not_converted
from tfpartial._step._plan import Action, Entry

# The step's kernel for a mode, or None (`_kernels._fused.step_for`).
Fused = Callable[[Mode], Optional[_fused.FusedStep]]


@not_converted
def apply_gradients(spec: StepSpec, grads_and_vars: GradsAndVars,
                    apply: ApplyFn, lazy_rows: bool = False,
                    keep_fully_frozen: bool = False,
                    fused: Optional[Fused] = None) -> Any:
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
    fused: called with the step's mode, gives the step's compiled kernel
      (`_fused.FusedStep`) or None; the variables it `takes` get their
      gradient unmasked and no restore.

  Returns:
    What `apply` returns; in a TF1 graph, an op that runs the whole step.
  """
  pairs = _checks.check_grads_and_vars(grads_and_vars, spec)
  spec.check_applies_to([variable for _, variable in pairs])
  path = _mode.current_path()
  update = fused(path.mode) if fused is not None else None
  entries = _plan.plan(pairs, spec.selection,
                       keep_fully_frozen=keep_fully_frozen, compact=True,
                       kernel=None if update is None else update.takes)
  _hint.hint_compact(entries)
  if all(entry.action is Action.DROP for entry in entries):
    raise _errors.nothing_to_train("grads_and_vars", [v for _, v in pairs])
  return run(entries, apply, path, update, lazy_rows)


def run(entries: Sequence[Entry], apply: ApplyFn, path: _mode.Path,
        update: Optional[_fused.FusedStep], lazy_rows: bool) -> Any:
  """Runs a planned step: masks, applies, restores, under the step lock
  where anything is restored (or a select update reads and writes)."""
  guards: List[_restore.Guard] = []
  applied: List[GradAndVar] = []
  in_place: List[Variable] = []
  for entry in entries:
    if entry.action is Action.DROP:
      continue
    if entry.action is Action.COMPACT and entry.selection is not None:
      compact_guard = _compact.guard(entry.variable, entry.selection)
      applied.append((compact_guard.gradient(entry.grad),
                      compact_guard.small))
      guards.append(compact_guard)
      continue
    applied.append((_mask.masked(entry), entry.variable))
    if entry.action is Action.KERNEL:
      in_place.append(entry.variable)
    elif entry.restored:
      guards.append(_guard(entry, lazy_rows))
  gradients = [grad for grad, _ in applied if grad is not None]

  def run_apply() -> Any:
    if in_place and update is not None:  # In place only where it took one.
      result = update.run(lambda receiver: apply(receiver, applied))
    else:
      result = apply(None, applied)
    if tf.executing_eagerly():
      # Eagerly each masked gradient is a live tensor until nothing holds
      # it: let them go before the restore allocates its select. A graph or
      # a function frees them itself.
      applied.clear()
      gradients.clear()
    return result

  graph_lock = bool(guards) or (update is not None and update.needs_lock)
  if not graph_lock and not (update is not None
                             and update.needs_eager_lock):
    return path.run(guards, run_apply, gradients, in_place)
  with _lock.held(gradients, graph=graph_lock) as lock:
    return path.run(guards, run_apply, gradients, in_place, lock)


def _guard(entry: Entry, lazy_rows: bool) -> _restore.Guard:
  """The rows of a lazy sparse update, else the whole variable."""
  assert entry.selection is not None  # A restored entry freezes something.
  if lazy_rows and isinstance(entry.grad, tf.IndexedSlices):
    return _restore.RowsGuard(entry.variable, entry.selection,
                              entry.grad.indices)
  return _restore.DenseGuard(entry.variable, entry.selection)


def substitute(spec: StepSpec, variables: Sequence[Variable]) -> List[Variable]:
  """`variables` with each compact table replaced by its compact variable
  (and a wholly frozen part of a compact table left out: no state), as an
  optimizer that builds its state up front must see them."""
  substituted = []
  for variable in variables:
    selection = spec.selection(variable)
    if selection is not None and selection.compact:
      if selection.is_everything:
        continue
      variable = _compact.compact_variable(variable, selection)
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
    if (selection is not None and selection.compact
        and not selection.is_everything):
      guards.append(_compact.guard(variable, selection))
    elif selection is not None and not selection.is_empty:
      guards.append(_restore.DenseGuard(variable, selection))
  with _lock.held(()) as lock:
    return _mode.current_path().run(guards, run, lock=lock)
