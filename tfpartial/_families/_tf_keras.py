"""The Keras 2 family: `tf_keras` optimizers, new and `legacy`.

For codebases midway through a migration (`TF_USE_LEGACY_KERAS=1`), and
for `keras` itself on TensorFlow 2.15 and older, which ship Keras 2. The
`tf_keras` package counts only when already imported: tfpartial never
imports it. A wrapped optimizer (`_wrap.py`) is stepped on every variable
it is given, fully frozen ones too (on a zero gradient, then restored), so
its slots are a plain run's; its config carries the spec, bound again on
the first step after `load_model`.
"""

from __future__ import annotations

from types import ModuleType
from typing import (TYPE_CHECKING, Any, Iterable, List, Optional, Sequence,
                    Tuple, cast)

import tensorflow as tf

from tfpartial._families import _family
from tfpartial._families import _wrap
from tfpartial._frozen import _compat
from tfpartial._frozen import _errors
from tfpartial._frozen._types import (GradAndVar, GradsAndVars, Kwargs, Loss,
                                      Optimizer, StepSpec, Variable)
from tfpartial._step import _apply
from tfpartial._step import _checks
from tfpartial._step import _mode


def _module_of(optimizer_class: type) -> Optional[ModuleType]:
  """The Keras 2 package `optimizer_class` belongs to, or None."""
  for module in _compat.keras2_modules():
    if issubclass(optimizer_class, (module.optimizers.Optimizer,
                                    module.optimizers.legacy.Optimizer)):
      return module
  return None


def owns(optimizer: object) -> bool:
  return _module_of(type(optimizer)) is not None


# A tf_keras optimizer is typed as an `Optimizer` only: tfpartial never
# imports tf_keras, so its classes cannot be named here.
def apply(optimizer: Optimizer, masked: Sequence[GradAndVar],
          kwargs: Kwargs) -> Any:
  return optimizer.apply_gradients(masked, **kwargs)


def gradients(spec: StepSpec, optimizer: Optimizer, loss: Loss,
              var_list: Optional[Iterable[Variable]],
              kwargs: Kwargs) -> Tuple[List[GradAndVar], Kwargs]:
  """What `optimizer.minimize(loss, var_list, tape=None, ...)` computes."""
  del optimizer  # tf_keras' own minimize does not scale the loss either.
  kwargs = dict(kwargs)
  tape, grad_loss = kwargs.pop("tape", None), kwargs.pop("grad_loss", None)
  if var_list is None:
    raise _errors.needs_var_list("tf_keras")
  trained = _checks.trainable_var_list(spec, var_list)
  if callable(loss):
    with tf.GradientTape() as tape:
      tape.watch(trained)
      loss = loss()
  elif tape is None:
    raise TypeError(
        "`tape` is required when `loss` is a tensor, as for tf_keras' own "
        "minimize.")
  grads = tape.gradient(loss, trained, output_gradients=grad_loss)
  return list(zip(grads, trained)) + _checks.left_out(spec, var_list), kwargs


if TYPE_CHECKING:  # What the mixin calls of its base (see `_wrap.py`).

  class _TfKerasOptimizer(_wrap.ConfigCarrier):
    """A tf_keras optimizer class (new or legacy), as the mixin calls it."""

    def apply_gradients(self, grads_and_vars: GradsAndVars, /, *args: Any,
                        **kwargs: Any) -> Any: ...

    def build(self, var_list: Sequence[Variable]) -> None: ...

    def finalize_variable_values(self, var_list: Sequence[Variable]
                                 ) -> None: ...
else:
  _TfKerasOptimizer = _wrap.ConfigCarrier


class PartialTfKerasOptimizer(_TfKerasOptimizer):
  """Mixed in before a tf_keras optimizer class."""

  def __setattr__(self, name: str, value: object) -> None:
    # A LossScaleOptimizer marks the optimizer it is made around (by
    # `compile` under a mixed_float16 policy). Refuse there: eagerly, a step
    # it skips never reaches `apply_gradients` to be refused.
    if name == "_is_wrapped_by_loss_scale_optimizer" and value:
      raise _wrap.loss_scale_outside(self)
    super().__setattr__(name, value)

  def build(self, var_list: Sequence[Variable]) -> None:
    # The new optimizers only (the legacy ones have no `build`). Built on
    # the model's variables (as Keras asks under a strategy), the optimizer
    # must know each compact table's small variable, which the step hands
    # it, not the table: Keras 2 builds once and then looks state up by
    # variable.
    var_list = list(var_list)
    super().build(_apply.substitute(self._tfpartial_value(var_list),
                                    var_list))

  @_mode.not_converted
  def apply_gradients(self, grads_and_vars: GradsAndVars, *args: Any,
                      **kwargs: Any) -> Any:
    _wrap.check_not_inside_loss_scaling(self)
    # Their shapes are the step's to check, with the spec in hand.
    pairs = _checks.pairs_of(grads_and_vars)
    variables = [v for _, v in pairs]
    value = self._tfpartial_value(variables)
    self._tfpartial_built(variables)
    parent = super().apply_gradients
    return _family.step(
        self._tfpartial_family, value, self, pairs,
        lambda receiver, masked: parent(masked, *args, **kwargs),
        keep_fully_frozen=True)

  def finalize_variable_values(self, var_list: Sequence[Variable]) -> Any:
    # The new optimizers' EMA finalization writes the averages straight
    # into the variables. (The legacy ones have no EMA, and Keras never
    # calls this on them.) A compact variable's averages are its small
    # variable's, which the guard writes back.
    var_list = list(var_list)
    value = self._tfpartial_value(var_list)
    parent = super().finalize_variable_values
    return _apply.guard(value, var_list,
                        lambda: parent(_apply.substitute(value, var_list)))


def register(cls: type) -> type:
  # One of the family's own classes: a Keras 2 package's.
  return _wrap.register_with(cast(ModuleType, _module_of(cls)).saving, cls)


def builtins() -> List[type]:
  """The built-in optimizers of the Keras 2 packages loaded now, new and
  legacy, so `load_model` finds a saved wrapped optimizer."""
  found: List[type] = []
  for module in _compat.keras2_modules():
    for namespace in (module.optimizers, module.optimizers.legacy):
      for name in dir(namespace):
        candidate = getattr(namespace, name)
        if (isinstance(candidate, type)
            and candidate not in (module.optimizers.Optimizer,
                                  module.optimizers.legacy.Optimizer)
            and _module_of(candidate) is module):
          found.append(candidate)
  return found
