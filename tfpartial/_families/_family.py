"""An optimizer family's row, and the one step every family runs.

Each family (`_v1`, `_keras`, `_tf_keras`) is described by a `Family` row
in `_optimizers.FAMILIES`: how to tell its optimizers, apply and minimize
with them, the mixin its wrapped classes get, its compiled kernels, and
whether its sparse updates are lazy. `step` is the step of every entry
point of every family, plain or wrapped: the row says the rest.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

from tfpartial._frozen._types import (ApplyFn, GradAndVar, GradsAndVars, Kwargs,
                                      Loss, Optimizer, StepSpec, Variable)
from tfpartial._step import _apply
from tfpartial._step import _fused

# `apply(optimizer, pairs, kwargs)`: the optimizer's own apply; returns what
# it returns (an op in a TF1 graph, the family's own value eagerly).
Apply = Callable[[Optimizer, Sequence[GradAndVar], Kwargs], Any]
# `gradients(spec, optimizer, loss, var_list, kwargs)`: for `spec.minimize`,
# the pairs to apply and the apply's keyword arguments.
Gradients = Callable[
    [StepSpec, Optimizer, Loss, Optional[Iterable[Variable]], Kwargs],
    Tuple[List[GradAndVar], Kwargs]]


@dataclasses.dataclass(frozen=True)
class Family:
  """What tfpartial needs to know about one kind of optimizer."""

  name: str
  # Whether any object is an optimizer of the family.
  owns: Callable[[object], bool]
  apply: Apply
  gradients: Gradients
  # Mixed in before the base class of a wrapped optimizer.
  mixin: type
  # The compiled kernels for some of its classes (of the packages loaded
  # now: a Keras 2 package may be imported after tfpartial).
  fused: Callable[[], Tuple[_fused.FusedKind, ...]] = lambda: ()
  # Whether the class's sparse update writes only the gradient's rows.
  lazy_rows: Callable[[type], bool] = lambda base: False
  # Registers a wrapped class where loading needs it (Keras), or None.
  register: Optional[Callable[[type], type]] = None
  # The built-in classes to register when tfpartial is imported.
  builtins: Callable[[], Iterable[type]] = lambda: ()


def step(family: Family, spec: StepSpec, optimizer: Optimizer,
         grads_and_vars: GradsAndVars, apply: ApplyFn,
         keep_fully_frozen: bool = False) -> Any:
  """One step of `optimizer` under `spec`: mask -> apply -> restore, with
  the family's kernels and lazy sparse updates; returns what `apply`
  returns."""
  base = base_of(optimizer)
  return _apply.apply_gradients(
      spec, grads_and_vars, apply,
      lazy_rows=family.lazy_rows(base),
      keep_fully_frozen=keep_fully_frozen,
      fused=lambda mode: _fused.step_for(family.fused(), optimizer, base,
                                         mode))


def plain_step(family: Family, spec: StepSpec, optimizer: Optimizer,
               grads_and_vars: GradsAndVars, kwargs: Kwargs) -> Any:
  """`spec.apply_gradients(optimizer, ...)` for an optimizer of `family`:
  fully frozen variables are left out, as the caller asked."""
  return step(family, spec, optimizer, grads_and_vars,
              lambda receiver, masked: family.apply(
                  optimizer if receiver is None else receiver, masked,
                  kwargs))


def base_of(optimizer: object) -> type:
  """The class an optimizer is of, seen through a wrapper (`_wrap.py`)."""
  base: type = getattr(type(optimizer), "_tfpartial_base", type(optimizer))
  return base
