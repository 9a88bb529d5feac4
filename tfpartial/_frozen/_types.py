"""Type aliases and the internal contracts shared by tfpartial's modules.

TensorFlow, Keras and h5py ship no type information, so to mypy their
classes are `Any` (`mypy.ini`). The protocols below say what tfpartial
reads of the objects it gets from them, so that mypy holds tfpartial's own
code to that; the aliases name what TensorFlow's `Any`s stand for.
"""

from __future__ import annotations

import enum
from types import EllipsisType
from typing import (Any, Callable, Dict, Iterable, Optional, Protocol,
                    Sequence, Tuple, TypeVar, Union)

import numpy as np
from numpy.typing import ArrayLike
import tensorflow as tf

from tfpartial._frozen._criteria import Computed, Criterion
from tfpartial._frozen._selection import Selection


class Mode(enum.Enum):
  """Where a step runs, decided once per call (`_step._mode.current_path`):
  TF2 code, eager or inside a `tf.function`, or a TF1 graph."""

  EAGER = "eager"
  TF1_GRAPH = "tf1_graph"


class Variable(Protocol):
  """A variable tfpartial can freeze part of.

  A `tf.Variable` (resource or TF1 ref), a distributed variable, or a
  Keras 3 variable (which wraps a tf.Variable). These are what all of them
  offer; what only a tf.Variable has (`ref`, `handle`, `scatter_update`,
  `read_value`, `device`) is read from `_variables.storage(variable)`,
  the tf.Variable that holds the value.
  """

  @property
  def name(self) -> str:
    """`x:0` for a tf.Variable, `x` for a Keras 3 variable."""

  @property
  def shape(self) -> tf.TensorShape: ...

  @property
  def dtype(self) -> Union[tf.dtypes.DType, str]:
    """A Keras 3 variable's is the dtype's name (`"float32"`)."""

  def numpy(self) -> np.ndarray: ...

  def assign(self, value: Any, /) -> Any:
    """Writes `value` (a tensor or anything convertible to one); returns an
    op in a TF1 graph, TensorFlow's value or the variable otherwise."""


class KerasVariable(Variable, Protocol):
  """A Keras 3 variable, as `_variables.is_keras` finds one."""

  @property
  def path(self) -> str:
    """The names of the layers in scope when it was made, then its own:
    its name in a checkpoint and in a spec file."""

  @property
  def value(self) -> tf.Variable:
    """The tf.Variable (or distributed variable) holding its value."""


# What an optimizer receives for one variable.
Gradient = Optional[Union[tf.Tensor, tf.IndexedSlices]]

GradAndVar = Tuple[Gradient, Variable]
GradsAndVars = Iterable[GradAndVar]

# One component of an index as NumPy takes it inside brackets: an int, a
# slice, `Ellipsis`, `None`, an integer index array or a boolean mask (as an
# array, nested lists or an eager tensor).
IndexComponent = Union[None, EllipsisType, slice, ArrayLike, tf.Tensor]

# What `freeze` and `train_only` take as `index`: a component, a tuple of
# components, a bool mask variable read at every step, or a criterion
# computed from the variable's values (`_criteria`; `Computed` from a spec
# file's entry).
Index = Union[IndexComponent, Tuple[IndexComponent, ...], Variable,
              Criterion, Computed]

# An index after `_index.check_index`: every component a Python int, bool,
# slice, `Ellipsis`, `None` or a NumPy array.
CheckedComponent = Union[None, EllipsisType, bool, np.bool_, int, slice,
                         np.ndarray]
CheckedIndex = Union[CheckedComponent, Tuple[CheckedComponent, ...]]


class Optimizer(Protocol):
  """An optimizer of one of the families in `_optimizers.FAMILIES`.

  What every family's optimizer offers: `apply_gradients` of a list of
  (gradient, variable) pairs. A family's module calls the rest of its own
  class's API (`compute_gradients`, `scale_loss`, ...) on that class.
  """

  # `grads_and_vars` is Any, not a list of `GradAndVar`: each family's
  # class declares its own (untyped) pair types, and a stub package that
  # types them must still match.
  def apply_gradients(self, grads_and_vars: Any, /) -> Any:
    """Applies the pairs; returns an op in a TF1 graph, or what the
    optimizer's family returns eagerly (the iteration count, None)."""


# An optimizer of a particular class: `spec.wrap` returns one of the class
# it is given (a subclass made for it), so code using the wrapped optimizer
# keeps its type.
OptimizerT = TypeVar("OptimizerT", bound=Optimizer)

# Keyword arguments passed on to an optimizer's own methods (`global_step`,
# `name`, `tape`, `grad_loss`, ...): TensorFlow's objects, so Any.
Kwargs = Dict[str, Any]

# What `minimize` takes as the loss: a tensor (TF1 graphs, tf_keras with a
# tape) or a zero-argument callable computing one.
Loss = Union[tf.Tensor, Callable[[], tf.Tensor]]

# The optimizer's own apply: `apply(receiver, pairs)`, where `receiver` is
# None or the optimizer a compiled kernel's update must be called on. It
# returns what the optimizer's apply returns (Any: an op in a TF1 graph, the
# family's own value eagerly).
ApplyFn = Callable[[Optional[Optimizer], Sequence[GradAndVar]], Any]


class StepSpec(Protocol):
  """What a training step needs to know of a spec (`_value.SpecValue`)."""

  @property
  def variables(self) -> Tuple[Variable, ...]: ...

  def selection(self, variable: Variable) -> Optional[Selection]:
    """The variable's frozen selection, or None when the spec leaves it."""

  def fully_frozen(self, variable: Variable) -> bool: ...

  def check_applies_to(self, variables: Iterable[Variable]) -> None:
    """ValueError when the spec names none of `variables`."""
