"""The Keras 2 family: `tf_keras` optimizers, new and `legacy`.

For codebases midway through a migration (`TF_USE_LEGACY_KERAS=1`), and
for `keras` itself on TensorFlow 2.15 and older, which ship Keras 2. The
`tf_keras` package counts only when already imported: tfpartial never
imports it. A wrapped optimizer subclasses the optimizer's class, as for
Keras 3, and its config carries the spec (`_carry.py`), bound again on the
first step after `load_model`.
"""

from __future__ import annotations

import functools
from typing import Any

import tensorflow as tf

from tfpartial import _carry
from tfpartial import _compat
from tfpartial import _step


def _module_of(optimizer_class: type):
  """The Keras 2 package `optimizer_class` belongs to, or None."""
  for module in _compat.keras2_modules():
    if issubclass(optimizer_class, (module.optimizers.Optimizer,
                                    module.optimizers.legacy.Optimizer)):
      return module
  return None


def owns(optimizer: Any) -> bool:
  return _module_of(type(optimizer)) is not None


def apply(optimizer, masked: list, kwargs: dict) -> Any:
  return optimizer.apply_gradients(masked, **kwargs)


def minimize(spec, optimizer, loss, var_list, kwargs: dict) -> Any:
  """`optimizer.minimize(loss, var_list, tape=None, ...)` under `spec`."""
  kwargs = dict(kwargs)
  tape, grad_loss = kwargs.pop("tape", None), kwargs.pop("grad_loss", None)
  if var_list is None:
    raise TypeError("`var_list` is required with a tf_keras optimizer.")
  var_list = _step.trainable_var_list(spec, var_list)
  if callable(loss):
    with tf.GradientTape() as tape:
      tape.watch(var_list)
      loss = loss()
  elif tape is None:
    raise TypeError(
        "`tape` is required when `loss` is a tensor, as for tf_keras' own "
        "minimize.")
  grads = tape.gradient(loss, var_list, output_gradients=grad_loss)
  return spec.apply_gradients(optimizer, zip(grads, var_list), **kwargs)


def wrap(spec, optimizer):
  """A copy of `optimizer`, of a subclass of its class, honouring `spec`."""
  return _carry.wrap(spec, optimizer, _PartialTfKerasOptimizer, partial_class)


class _PartialTfKerasOptimizer(_carry.SpecCarrier):
  """Mixed in before a tf_keras optimizer class."""

  def apply_gradients(self, grads_and_vars, *args, **kwargs):
    pairs = _step.check_grads_and_vars(grads_and_vars)
    variables = [v for _, v in pairs]
    spec = self._tfpartial_spec_for(variables)
    self._tfpartial_built(variables)
    parent = super().apply_gradients
    return _step.apply_gradients(
        spec, pairs, lambda masked: parent(masked, *args, **kwargs))


class _EmaGuard:
  """Mixed in for the new optimizers, which have EMA finalization."""

  def finalize_variable_values(self, var_list):
    # EMA finalization writes the averages straight into the variables; it
    # knows only the variables the optimizer was built on.
    var_list = list(var_list)
    spec = self._tfpartial_spec_for(var_list)
    kept = [v for v in var_list if not spec._fully_frozen(v)]
    parent = super().finalize_variable_values
    return _step.guard(spec, kept, lambda: parent(kept))


@functools.lru_cache(maxsize=None)
def partial_class(base: type) -> type:
  """`Partial<Base>`, registered with tf_keras as `tfpartial>Partial<Base>`."""
  mixins = (_PartialTfKerasOptimizer,)
  if hasattr(base, "finalize_variable_values"):  # Not the legacy ones.
    mixins += (_EmaGuard,)
  legacy = "Legacy" if "legacy" in base.__module__ else ""
  cls = type(f"Partial{legacy}{base.__name__}", mixins + (base,),
             {"__module__": __name__, "__doc__": base.__doc__,
              "_tfpartial_base": base})
  return _module_of(base).saving.register_keras_serializable(
      package="tfpartial")(cls)


def _register_builtins() -> None:
  """Registers `Partial<Name>` for the built-in optimizers of the Keras 2
  packages loaded now, so `load_model` finds a saved wrapped optimizer."""
  for module in _compat.keras2_modules():
    for namespace in (module.optimizers, module.optimizers.legacy):
      for name in dir(namespace):
        candidate = getattr(namespace, name)
        if (isinstance(candidate, type)
            and candidate not in (module.optimizers.Optimizer,
                                  module.optimizers.legacy.Optimizer)
            and _module_of(candidate) is module):
          partial_class(candidate)


_register_builtins()
