"""The Keras 3 optimizer family: apply, minimize, wrap, save and load.

A wrapped Keras optimizer (`_wrap.py`) is built on every variable, fully
frozen ones too, so its state sits in a plain optimizer's order (Keras
checkpoints it by position). Its config carries the spec, so the freeze
travels with a saved model; the wrapped classes of the built-in optimizers
are registered with Keras when tfpartial is imported, as Keras asks of
custom objects, so loading needs only `import tfpartial`.
"""

from __future__ import annotations

from typing import (TYPE_CHECKING, Any, Iterable, List, Optional, Sequence,
                    Tuple)

import keras
import tensorflow as tf

from tfpartial._families import _family
from tfpartial._families import _wrap
from tfpartial._frozen import _compat
from tfpartial._frozen import _errors
from tfpartial._frozen._types import (GradAndVar, Gradient, Kwargs, Loss,
                                      StepSpec, Variable)
from tfpartial._step import _apply
from tfpartial._step import _checks
from tfpartial._step import _mode


def owns(optimizer: object) -> bool:
  return _compat.KERAS_3 and isinstance(optimizer, keras.optimizers.Optimizer)


def apply(optimizer: keras.optimizers.Optimizer,
          masked: Sequence[GradAndVar], kwargs: Kwargs) -> Any:
  if kwargs:
    raise _errors.no_keyword_arguments(
        "a Keras optimizer's apply_gradients", kwargs)
  return optimizer.apply_gradients(masked)


def gradients(spec: StepSpec, optimizer: keras.optimizers.Optimizer,
              loss: Loss, var_list: Optional[Iterable[Variable]],
              kwargs: Kwargs) -> Tuple[List[GradAndVar], Kwargs]:
  """One step's pairs for `spec.minimize`: `loss` is a zero-argument
  callable, scaled as Keras' `fit` scales it."""
  if kwargs:
    raise _errors.no_keyword_arguments(
        "minimize() with a Keras optimizer", kwargs)
  if not callable(loss):
    raise TypeError(
        "`loss` must be a zero-argument callable for a Keras optimizer, "
        "which runs eagerly or in tf.function (not in a TF1 graph).")
  if var_list is None:
    raise _errors.needs_var_list("Keras")
  trained = _checks.trainable_var_list(spec, var_list)
  with tf.GradientTape() as tape:
    value = optimizer.scale_loss(loss())
  grads = tape.gradient(value, trained)
  return list(zip(grads, trained)) + _checks.left_out(spec, var_list), {}


if TYPE_CHECKING:  # What the mixin calls of its base (see `_wrap.py`).

  class _KerasOptimizer(_wrap.ConfigCarrier):
    """A `keras.optimizers.Optimizer` class, as the mixin calls it."""

    built: bool
    _trainable_variables: List[Variable]

    def build(self, variables: List[Variable]) -> None: ...

    def apply(self, grads: Sequence[Gradient],
              trainable_variables: Optional[Sequence[Variable]] = None
              ) -> Any: ...

    def finalize_variable_values(self, var_list: Sequence[Variable]
                                 ) -> None: ...
else:
  _KerasOptimizer = _wrap.ConfigCarrier


class PartialKerasOptimizer(_KerasOptimizer):
  """Mixed in before a Keras optimizer class: its updates honour the spec."""

  def __setattr__(self, name: str, value: object) -> None:
    # A LossScaleOptimizer being made around this one (by `compile` under a
    # mixed_float16 policy) sets this first: refuse there, in `compile`.
    if name == "loss_scale_factor":
      _wrap.check_not_inside_loss_scaling(self)
    super().__setattr__(name, value)

  def build(self, variables: Iterable[Variable]) -> None:
    variables = list(variables)
    _wrap.check_not_inside_loss_scaling(self)
    value = self._tfpartial_value(variables)
    trained = {id(v) for v in variables}
    # Fully frozen variables may be missing: masking already dropped them.
    # A spec bound by name holds what every optimizer sharing it trains,
    # and has checked its names itself.
    late = self.__dict__.get("_tfpartial_late") is not None
    missing = [v for v in value.step_variables
               if id(v) not in trained and not value.fully_frozen(v)
               and not late]
    if missing:
      raise _errors.not_trained(missing, variables)
    self._tfpartial_built(variables)
    # Built on every variable, fully frozen ones too: Keras keeps optimizer
    # state by position, so checkpoints then match a plain optimizer's.
    super().build(_apply.substitute(value, variables))

  @_mode.not_converted
  def apply(self, grads: Sequence[Gradient],
            trainable_variables: Optional[Sequence[Variable]] = None) -> Any:
    if trainable_variables is None:
      trainable_variables = self._trainable_variables
    grads, variables = list(grads), list(trainable_variables)
    value = self._tfpartial_value(variables)
    if not self.built:
      # Built here, on the model's variables, not the compact ones the step
      # hands the optimizer.
      self.build(variables)
      self.built = True
    parent = super().apply
    return _family.step(
        self._tfpartial_family, value, self, zip(grads, variables),
        lambda receiver, masked: parent([g for g, _ in masked],
                                        [v for _, v in masked]),
        keep_fully_frozen=True)

  def finalize_variable_values(self, var_list: Sequence[Variable]) -> Any:
    # EMA finalization writes the averages straight into the variables, and
    # pairs them with the variables the optimizer was built on.
    var_list = list(var_list)
    value = self._tfpartial_value(var_list)
    parent = super().finalize_variable_values
    return _apply.guard(value, var_list,
                       lambda: parent(_apply.substitute(value, var_list)))


def register(cls: type) -> type:
  return _wrap.register_with(keras.saving, cls)


def builtins() -> List[type]:
  """The optimizer classes `keras.optimizers` exports."""
  if not _compat.KERAS_3:
    return []
  found: List[type] = []
  for name in dir(keras.optimizers):
    candidate = getattr(keras.optimizers, name)
    if (isinstance(candidate, type)
        and issubclass(candidate, keras.optimizers.Optimizer)
        and candidate is not keras.optimizers.Optimizer):
      found.append(candidate)
  return found
