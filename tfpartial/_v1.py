"""The `tf.compat.v1.train.Optimizer` family, in TF1 graphs and eagerly."""

from __future__ import annotations

import functools
from typing import Any, Iterable, List, Optional

import tensorflow as tf

from tfpartial import _fused_adam
from tfpartial import _step
from tfpartial import _variables
from tfpartial._types import Variable

_COMPUTE_KWARGS = frozenset(
    ("gate_gradients", "aggregation_method", "colocate_gradients_with_ops",
     "grad_loss"))
_APPLY_KWARGS = frozenset(("global_step", "name"))


_T = tf.compat.v1.train
# Their sparse updates (`scatter_*`, `sparse_apply_*`) write only the rows of
# the gradient. Adam's is not lazy: it decays all of `m` and `v`, and moves
# every row.
_LAZY_ROWS = (_T.GradientDescentOptimizer, _T.MomentumOptimizer,
              _T.AdagradOptimizer, _T.AdagradDAOptimizer,
              _T.AdadeltaOptimizer, _T.RMSPropOptimizer, _T.FtrlOptimizer,
              _T.ProximalGradientDescentOptimizer, _T.ProximalAdagradOptimizer)


def owns(optimizer: Any) -> bool:
  return isinstance(optimizer, tf.compat.v1.train.Optimizer)


def lazy_rows(optimizer: Any) -> bool:
  """Whether the optimizer is one whose sparse update is lazy (not a
  subclass, which may update differently)."""
  return getattr(optimizer, "_tfpartial_base", type(optimizer)) in _LAZY_ROWS


def apply(optimizer, masked: list, kwargs: dict) -> Any:
  return optimizer.apply_gradients(masked, **kwargs)


def minimize(spec, optimizer, loss, var_list, kwargs: dict) -> Any:
  """`optimizer.minimize(loss, ...)` under `spec`."""
  unknown = set(kwargs) - _COMPUTE_KWARGS - _APPLY_KWARGS
  if unknown:
    raise TypeError(
        f"minimize() got unexpected keyword arguments {sorted(unknown)}; "
        "a tf.compat.v1 optimizer takes "
        f"{sorted(_COMPUTE_KWARGS | _APPLY_KWARGS)}.")
  compute = {k: v for k, v in kwargs.items() if k in _COMPUTE_KWARGS}
  grads_and_vars = optimizer.compute_gradients(
      loss, var_list=trainable_var_list(spec, var_list), **compute)
  if not any(grad is not None for grad, _ in grads_and_vars):
    raise ValueError(
        "No gradients provided for any variable: "
        f"{[_variables.checkpoint_name(v) for _, v in grads_and_vars]}.")
  return spec.apply_gradients(
      optimizer, grads_and_vars,
      **{k: v for k, v in kwargs.items() if k in _APPLY_KWARGS})


def trainable_var_list(spec, var_list: Optional[Iterable[Variable]]
                       ) -> Optional[List[Variable]]:
  """`var_list` (by default TF1's) without the variables fully frozen.

  Returns None when eager and no list is given: the optimizer then trains
  what the tape watches, and masking drops the fully frozen ones.
  """
  if var_list is None:
    with tf.init_scope():
      if tf.executing_eagerly():
        return None
    var_list = (
        tf.compat.v1.trainable_variables() + tf.compat.v1.get_collection(
            tf.compat.v1.GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
  return _step.trainable_var_list(spec, var_list)


def wrap(spec, optimizer):
  """A copy of `optimizer`, of a subclass of its class, honouring `spec`.

  The copy shares the optimizer's slot and non-slot dictionaries, so both
  see one optimizer state and one checkpoint layout.
  """
  base = type(optimizer)
  if isinstance(optimizer, _PartialOptimizerV1):
    spec = optimizer._tfpartial_spec | spec
    base = optimizer._tfpartial_base
  wrapped = object.__new__(_partial_class(base))
  wrapped.__dict__.update(optimizer.__dict__)
  wrapped.__dict__["_tfpartial_spec"] = spec
  wrapped.__dict__["_tfpartial_base"] = base
  return wrapped


class _PartialOptimizerV1:
  """Mixed in before a TF1 optimizer class: its updates honour the spec."""

  _tfpartial_spec: Any
  _tfpartial_base: type

  def compute_gradients(self, loss, var_list=None, **kwargs):
    spec = self._tfpartial_spec
    pairs = super().compute_gradients(
        loss, var_list=trainable_var_list(spec, var_list), **kwargs)
    return spec.mask_gradients(pairs)

  def apply_gradients(self, grads_and_vars, global_step=None, name=None,
                      **kwargs):
    base_apply = super().apply_gradients
    return _step.apply_gradients(
        self._tfpartial_spec, grads_and_vars,
        lambda masked: base_apply(
            masked, global_step=global_step, name=name, **kwargs),
        lazy_rows=lazy_rows(self),
        fused=lambda path: _fused_adam.for_optimizer(self, path))


@functools.lru_cache(maxsize=None)
def _partial_class(base: type) -> type:
  return type(f"Partial{base.__name__}", (_PartialOptimizerV1, base),
              {"__module__": __name__, "__doc__": base.__doc__})
