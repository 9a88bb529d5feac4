"""Type aliases and the internal contracts shared by tfpartial's modules.

TensorFlow and Keras ship no type information, so to a type checker their
classes are `Any`; the aliases below still say which is meant.
"""

from __future__ import annotations

from typing import (Any, Callable, Iterable, Optional, Protocol, Sequence,
                    Tuple, Union)

import tensorflow as tf

from tfpartial._selection import Selection

# A variable tfpartial can freeze part of: `tf.Variable` (resource or TF1 ref),
# a distributed variable, or a Keras 3 variable (which wraps a tf.Variable).
Variable = Any

# What an optimizer receives for one variable.
Gradient = Optional[Union[tf.Tensor, tf.IndexedSlices]]

GradAndVar = Tuple[Gradient, Variable]
GradsAndVars = Iterable[GradAndVar]

# An index as NumPy understands it inside brackets: an int, a slice, a tuple of
# those, `Ellipsis`, `None`, integer index arrays, a boolean mask, or a bool
# mask variable.
Index = Any

# An optimizer of one of the families in `_optimizers.FAMILIES`.
Optimizer = Any

# The optimizer's own apply: `apply(receiver, pairs)`, where `receiver` is
# None or the object a compiled kernel's update must be called on.
ApplyFn = Callable[[Optional[Any], Sequence[GradAndVar]], Any]


class StepSpec(Protocol):
  """What a training step needs to know of a spec (`_value.SpecValue`)."""

  @property
  def variables(self) -> Tuple[Variable, ...]: ...

  def selection(self, variable: Variable) -> Optional[Selection]:
    """The variable's frozen selection, or None when the spec leaves it."""

  def fully_frozen(self, variable: Variable) -> bool: ...

  def check_applies_to(self, variables: Iterable[Variable]) -> None:
    """ValueError when the spec names none of `variables`."""
