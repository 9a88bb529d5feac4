"""The plan of a step: what it does with each variable, decided up front.

`plan` sorts every (gradient, variable) pair by what the spec freezes of
the variable into one `Action`. The step (`_apply`) and the gradient masks
a user calls (`_mask.mask_gradients`, `_mask.mask_aligned`) read the same
plan, so a variable is treated alike wherever it goes. A plan holds no
tensor of its own: it is decided before anything runs, and each part of a
step can be tested alone.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Callable, List, Optional

from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import GradAndVar, Gradient, Variable

# variable -> its selection in the spec, None when the spec leaves it alone.
Lookup = Callable[[Variable], Optional[Selection]]
# Whether a compiled kernel takes the pair, updating it with the freeze
# inside (`_kernels._fused.FusedStep.takes`, which then remembers it).
Takes = Callable[[Gradient, Variable, Selection], bool]


class Action(enum.Enum):
  """What a step does with one variable."""

  KEEP = "keep"  # Nothing frozen, or no gradient: as the optimizer gets it.
  DROP = "drop"  # Fully frozen, and left out of the step.
  ZERO = "zero"  # Fully frozen, kept: an exact zero gradient; restored.
  MASK = "mask"  # Partly frozen: frozen elements' gradient 0; restored.
  KERNEL = "kernel"  # A compiled kernel updates it and keeps the freeze.
  COMPACT = "compact"  # Trained through a small variable of its rows.


@dataclasses.dataclass(frozen=True)
class Entry:
  """One variable's part of a plan."""

  action: Action
  grad: Gradient
  variable: Variable
  selection: Optional[Selection]

  @property
  def restored(self) -> bool:
    """Whether the step snapshots the variable and restores its frozen
    elements after the update (a compact entry's guard is its own)."""
    return self.action is Action.MASK or (
        self.action is Action.ZERO and self.grad is not None)


def plan(pairs: List[GradAndVar], lookup: Lookup, *, keep_fully_frozen: bool,
         compact: bool = False, kernel: Optional[Takes] = None) -> List[Entry]:
  """One `Entry` per pair, in order.

  Args:
    pairs: checked (gradient, variable) pairs.
    lookup: gives each variable's selection, or None.
    keep_fully_frozen: a fully frozen variable gets a zero gradient (ZERO)
      instead of being left out (DROP).
    compact: a compact selection trains through its small variable; else
      its gradient is masked like any other.
    kernel: offers each pair to a compiled kernel, or None.

  >>> import tensorflow as tf
  >>> from tfpartial._frozen import _selection
  >>> x, y = tf.Variable([1.0, 2.0]), tf.Variable([3.0])
  >>> frozen = {x.ref(): _selection.from_mask(np.array([True, False])),
  ...           y.ref(): _selection.Everything((1,))}
  >>> entries = plan([(tf.ones(2), x), (tf.ones(1), y)],
  ...                lambda v: frozen.get(v.ref()), keep_fully_frozen=False)
  >>> [entry.action.value for entry in entries]
  ['mask', 'drop']
  """
  entries = []
  for grad, variable in pairs:
    selection = lookup(variable)
    entries.append(Entry(
        action(grad, variable, selection, keep_fully_frozen=keep_fully_frozen,
               compact=compact, kernel=kernel), grad, variable, selection))
  return entries


def action(grad: Gradient, variable: Variable, selection: Optional[Selection],
           *, keep_fully_frozen: bool, compact: bool = False,
           kernel: Optional[Takes] = None) -> Action:
  """What the step does with one pair (`plan` says what the flags mean)."""
  if selection is None or selection.is_empty:
    return Action.KEEP
  if selection.is_everything:
    # A wholly frozen part of a compact table has no state in the compact
    # layout: left out even where fully frozen variables are kept.
    if not keep_fully_frozen or selection.compact:
      return Action.DROP
    if grad is not None and kernel is not None and kernel(
        grad, variable, selection):
      return Action.KERNEL  # The kernel keeps all of it.
    return Action.ZERO
  if compact and selection.compact:
    return Action.COMPACT
  if grad is None:
    return Action.KEEP
  if kernel is not None and kernel(grad, variable, selection):
    return Action.KERNEL  # The kernel ignores the frozen elements.
  return Action.MASK
