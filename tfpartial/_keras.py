"""The Keras 3 optimizer family: apply, minimize, wrap, save and load.

A wrapped Keras optimizer is an instance of a subclass of the optimizer's
own class (`PartialAdam` for `Adam`), so `isinstance`, `get_config`,
checkpoints and `model.compile` see the optimizer they know. It is built
on every variable, fully frozen ones too, so its state sits in a plain
optimizer's order (Keras checkpoints it by position). Its config carries
the spec (`_carry.py`), so the freeze travels with a saved model; the
subclasses of the built-in optimizers are registered with Keras when
tfpartial is imported, as Keras asks of custom objects, so loading needs
only `import tfpartial`.
"""

from __future__ import annotations

import functools
from typing import Any

import keras
import tensorflow as tf

from tfpartial import _carry
from tfpartial import _compat
from tfpartial import _fused_keras
from tfpartial import _step
from tfpartial import _variables

_PACKAGE = "tfpartial"


def owns(optimizer: Any) -> bool:
  return _compat.KERAS_3 and isinstance(optimizer, keras.optimizers.Optimizer)


def apply(optimizer, masked: list, kwargs: dict) -> Any:
  if kwargs:
    raise TypeError(
        "a Keras optimizer's apply_gradients takes no keyword arguments; got "
        f"{sorted(kwargs)}.")
  return optimizer.apply_gradients(masked)


def minimize(spec, optimizer, loss, var_list, kwargs: dict) -> Any:
  """One step on `loss`, a zero-argument callable, for a Keras optimizer."""
  if kwargs:
    raise TypeError(
        "minimize() with a Keras optimizer takes no keyword arguments; got "
        f"{sorted(kwargs)}.")
  if not callable(loss):
    raise TypeError(
        "`loss` must be a zero-argument callable for a Keras optimizer, "
        "which runs eagerly or in tf.function (not in a TF1 graph).")
  if var_list is None:
    raise TypeError("`var_list` is required with a Keras optimizer.")
  var_list = _step.trainable_var_list(spec, var_list)
  with tf.GradientTape() as tape:
    value = optimizer.scale_loss(loss())  # Loss scaling, as Keras' fit does.
  grads = tape.gradient(value, var_list)
  return spec.apply_gradients(optimizer, zip(grads, var_list))


def wrap(spec, optimizer):
  """A copy of `optimizer`, of a subclass of its class, honouring `spec`."""
  return _carry.wrap(spec, optimizer, _PartialKerasOptimizer, partial_class)


class _PartialKerasOptimizer(_carry.SpecCarrier):
  """Mixed in before a Keras optimizer class: its updates honour the spec."""

  def _tfpartial_check_trains(self, spec, variables) -> None:
    # Fully frozen variables may be missing: masking already dropped them.
    trained = {id(v) for v in variables}
    missing = [v for v in spec.variables
               if id(v) not in trained and not spec._fully_frozen(v)]
    if missing:
      names = ", ".join(_variables.describe(v) for v in missing)
      raise ValueError(
          f"the spec names {names}, which this optimizer does not train (it "
          "is built on the model's trainable variables); was the spec built "
          "for another model, or is the variable not trainable?")

  def build(self, variables):
    variables = list(variables)
    spec = self._tfpartial_spec_for(variables)
    self._tfpartial_check_trains(spec, variables)
    self._tfpartial_built(variables)
    # Built on every variable, fully frozen ones too: Keras keeps optimizer
    # state by position, so checkpoints then match a plain optimizer's.
    super().build(_step.substitute(spec, variables))

  def apply(self, grads, trainable_variables=None):
    if trainable_variables is None:
      trainable_variables = self._trainable_variables
    grads, variables = list(grads), list(trainable_variables)
    spec = self._tfpartial_spec_for(variables)
    if not self.built:  # Built here, on the model's variables, not the
      self.build(variables)  # compact ones the step hands the optimizer.
      self.built = True
    base_apply = super().apply

    def run(masked):
      return base_apply([g for g, _ in masked], [v for _, v in masked])

    return _step.apply_gradients(
        spec, zip(grads, variables), run, keep_fully_frozen=True,
        fused=lambda path: _fused_keras.for_optimizer(self, path))

  def finalize_variable_values(self, var_list):
    # EMA finalization writes the averages straight into the variables, and
    # pairs them with the variables the optimizer was built on.
    var_list = list(var_list)
    spec = self._tfpartial_spec_for(var_list)
    parent = super().finalize_variable_values
    return _step.guard(spec, var_list,
                       lambda: parent(_step.substitute(spec, var_list)))


@functools.lru_cache(maxsize=None)
def partial_class(base: type) -> type:
  """`Partial<Base>`, registered with Keras as `tfpartial>Partial<Base>`."""
  cls = type(f"Partial{base.__name__}", (_PartialKerasOptimizer, base),
             {"__module__": __name__, "__doc__": base.__doc__,
              "_tfpartial_base": base})
  return keras.saving.register_keras_serializable(package=_PACKAGE)(cls)


def _register_builtins() -> None:
  for name in dir(keras.optimizers):
    candidate = getattr(keras.optimizers, name)
    if (isinstance(candidate, type)
        and issubclass(candidate, keras.optimizers.Optimizer)
        and candidate is not keras.optimizers.Optimizer):
      partial_class(candidate)


if _compat.KERAS_3:
  _register_builtins()
