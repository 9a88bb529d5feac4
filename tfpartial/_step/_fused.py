"""The step's choice of a compiled kernel, per call and per variable.

For some optimizer classes tfpartial has a compiled kernel (`_kernels`)
that is the class's update with the freeze inside it: frozen elements keep
their value and their gradient is never read, so the step needs no
gradient mask, no snapshot and no restore. A `FusedKind` says which class
it serves (`base`, exactly: a subclass may update differently), when it
can serve a step (`serves`) and a variable (`frozen`), and holds the
`mixin` whose methods replace the class's per-variable update. The kinds
and their mixins are the families' (`_families/_fused_*.py`): only a
family knows which of its optimizer's members to override. This module
knows no optimizer.

The choice is made by a class, never by changing the user's optimizer: a
wrapped optimizer's class includes the mixin (`_wrap.partial_class`), and a
plain optimizer is stepped through a *view*, an object of
`Fused<Base>` that shares the optimizer's attribute dictionary, so it reads
and writes the very same state. Which variables of this step the kernel
takes is a per-call `Plan`, held in a context variable: each thread (and
each `tf.function` trace) sees its own, so optimizers shared by threads stay
safe; a mixin asks it with `planned`.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
from typing import Any, Callable, Dict, Iterator, Optional, Tuple, cast

import tensorflow as tf

from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Gradient, Mode, Optimizer, Variable
from tfpartial._kernels import _inputs
from tfpartial._kernels import _native


@dataclasses.dataclass(frozen=True)
class FusedKind:
  """A compiled update for one optimizer class."""

  base: type
  mixin: type
  # Whether the kernel can serve a step of `optimizer` in a mode: its
  # settings, the device, XLA, tf.distribute.
  serves: Callable[[Optimizer, Mode], bool]
  # The frozen mask the kernel takes for `variable`, or None where it
  # cannot serve it.
  frozen: Callable[[Gradient, Variable, Selection], Optional[tf.Tensor]]
  # Whether the kernel for `optimizer` takes the trainable elements'
  # offsets in place of the mask (an update without a slot, which leaves
  # frozen elements and their state alone): then it does so for a mostly
  # frozen variable (`trainable_offsets`).
  offsets: Callable[[Optimizer], bool] = lambda optimizer: False
  # Whether the update is the compiled library's (`_native`); else it is
  # made of TensorFlow ops (a select update, `_select_keras`), which serves
  # without the library, and runs under the step lock (`_lock`): it reads
  # the variable before it writes it, as a restore does.
  library: bool = True
  # Whether an eager step the kernel takes holds the step lock anyway:
  # the optimizer counts its steps with a read and then a write of its
  # step counter (Keras 3's `iterations.assign_add(1)` is
  # `assign(iterations + 1)`), and threads racing there lose steps.
  counts_racily: bool = False


@dataclasses.dataclass(frozen=True)
class Plan:
  """One call's fused variables: storage ref -> (variable, frozen mask).

  `state` is the attribute dictionary of the optimizer being stepped, so a
  mixin acts only on the plan made for its own optimizer.
  """

  state: Dict[str, Any]
  taken: Dict[Any, Tuple[Variable, tf.Tensor]]
  library: bool = True  # The kind's `library`.


_PLAN: contextvars.ContextVar[Optional[Plan]] = contextvars.ContextVar(
    "tfpartial_fused_plan", default=None)


def planned(optimizer: Optimizer,
            variable: Variable) -> Optional[Tuple[Variable, tf.Tensor]]:
  """(the variable as the step named it, its frozen mask) when the kernel
  updates `variable` in the step running now, else None."""
  plan = _PLAN.get()
  if plan is None or plan.state is not vars(optimizer):
    return None
  return plan.taken.get(_variables.storage(variable).ref())


def planned_library() -> bool:
  """Whether the plan of the step running now is the compiled library's
  (else a select update's); for a mixin that has both."""
  plan = _PLAN.get()
  return plan is None or plan.library


@functools.lru_cache(maxsize=None)
def fused_class(kind: FusedKind) -> type:
  """`Fused<Base>`: the base class with the kernel's update mixed in."""
  base = kind.base
  return type(f"Fused{base.__name__}", (kind.mixin, base),
              {"__module__": __name__, "__doc__": base.__doc__})


def kind_for(kinds: Tuple[FusedKind, ...], base: type) -> Optional[FusedKind]:
  """The first kind for `base`: its mixin is every kind's for `base`."""
  for kind in kinds:
    if kind.base is base:
      return kind
  return None


class FusedStep:
  """One step's use of a kernel: which variables it takes, then the update.

  `receiver` is what the optimizer's apply is called on: the optimizer
  itself when its class has the kernel's mixin (a wrapped one), else a
  view of it.
  """

  def __init__(self, kind: FusedKind, optimizer: Optimizer):
    self.kind, self.optimizer = kind, optimizer
    if isinstance(optimizer, kind.mixin):
      self.receiver = optimizer
    else:
      self.receiver = view(optimizer, fused_class(kind))
    self._taken: Dict[Any, Tuple[Variable, tf.Tensor]] = {}

  @property
  def needs_lock(self) -> bool:
    """Whether the step must hold the step lock for the variables taken: a
    select update reads a variable and writes it back."""
    return not self.kind.library and bool(self._taken)

  @property
  def needs_eager_lock(self) -> bool:
    """Whether an eager step must hold the step lock (`_lock.held` with
    `graph=False`) so that its optimizer counts every step (the kind's
    `counts_racily`)."""
    return self.kind.counts_racily and bool(self._taken)

  def takes(self, grad: Gradient, variable: Variable,
            selection: Selection) -> bool:
    """Whether the kernel updates `variable`; if so, it will in `run`."""
    frozen = self.kind.frozen(grad, variable, selection)
    if frozen is None:
      return False
    if self.kind.offsets(self.optimizer):
      offsets = _inputs.trainable_offsets(selection)
      if offsets is not None:
        frozen = offsets
    self._taken[_variables.storage(variable).ref()] = (variable, frozen)
    return True

  def run(self, apply: Callable[[Optimizer], Any]) -> Any:
    """`apply(receiver)`, with the variables `takes` accepted updated by
    the kernel."""
    plan = Plan(vars(self.optimizer), dict(self._taken), self.kind.library)
    with _active(plan):
      return apply(self.receiver)


@contextlib.contextmanager
def _active(plan: Plan) -> Iterator[None]:
  token = _PLAN.set(plan)
  try:
    yield
  finally:
    _PLAN.reset(token)


def step_for(kinds: Tuple[FusedKind, ...], optimizer: Optimizer,
             base: type, mode: Mode) -> Optional[FusedStep]:
  """A `FusedStep` of the first kind for `base` that can serve this step of
  `optimizer` (a kind of the library's only where it is loaded)."""
  for kind in kinds:
    if (kind.base is base and kind.serves(optimizer, mode)
        and (not kind.library or _native.library() is not None)):
      return FusedStep(kind, optimizer)
  return None


def view(optimizer: Optimizer, cls: type) -> Optimizer:
  """An object of class `cls` sharing `optimizer`'s attribute dictionary.

  Every read and write goes to the optimizer's own state, as if its class
  were `cls`; the optimizer itself is left as it is.
  """
  shared: Any = object.__new__(cls)
  object.__setattr__(shared, "__dict__", vars(optimizer))
  return cast(Optimizer, shared)


def on_cpu_alone() -> bool:
  """No GPU visible and no tf.distribute strategy: where kernels serve."""
  return not (tf.distribute.has_strategy() or _has_gpu())


@functools.lru_cache(maxsize=None)
def _has_gpu() -> bool:
  # The devices a process sees are fixed once TensorFlow has started.
  return bool(tf.config.list_physical_devices("GPU"))
