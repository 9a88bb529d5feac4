"""The `tf.compat.v1.train.Optimizer` family, in TF1 graphs and eagerly."""

from __future__ import annotations

from typing import (TYPE_CHECKING, Any, Dict, Iterable, List, Optional,
                    Sequence, Tuple)

import tensorflow as tf

from tfpartial._families import _family
from tfpartial._families import _wrap
from tfpartial._frozen import _variables
from tfpartial._frozen._types import (GradAndVar, GradsAndVars, Kwargs, Loss,
                                      StepSpec, Variable)
from tfpartial._frozen._value import SpecValue
from tfpartial._step import _checks
from tfpartial._step import _compact
from tfpartial._step import _mask
from tfpartial._step import _mode

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


def owns(optimizer: object) -> bool:
  return isinstance(optimizer, tf.compat.v1.train.Optimizer)


def lazy_rows(base: type) -> bool:
  """Whether the class is one whose sparse update is lazy (not a subclass,
  which may update differently)."""
  return base in _LAZY_ROWS


def apply(optimizer: tf.compat.v1.train.Optimizer,
          masked: Sequence[GradAndVar], kwargs: Kwargs) -> Any:
  return optimizer.apply_gradients(masked, **kwargs)


def gradients(spec: StepSpec, optimizer: tf.compat.v1.train.Optimizer,
              loss: Loss, var_list: Optional[Iterable[Variable]],
              kwargs: Kwargs) -> Tuple[List[GradAndVar], Kwargs]:
  """What `optimizer.minimize(loss, ...)` would compute, for
  `spec.minimize`: the pairs (fully frozen variables left out of
  `var_list`, so they get no slots) and the apply arguments."""
  unknown = set(kwargs) - _COMPUTE_KWARGS - _APPLY_KWARGS
  if unknown:
    raise TypeError(
        f"minimize() got unexpected keyword arguments {sorted(unknown)}; "
        "a tf.compat.v1 optimizer takes "
        f"{sorted(_COMPUTE_KWARGS | _APPLY_KWARGS)}.")
  compute = {k: v for k, v in kwargs.items() if k in _COMPUTE_KWARGS}
  var_list = _var_list(spec, var_list)
  trained = (None if var_list is None
             else [v for v in var_list if not spec.fully_frozen(v)])
  grads_and_vars = optimizer.compute_gradients(loss, var_list=trained,
                                               **compute)
  if not any(grad is not None for grad, _ in grads_and_vars):
    raise ValueError(
        "No gradients provided for any variable: "
        f"{[_variables.checkpoint_name(v) for _, v in grads_and_vars]}.")
  left_out = [] if var_list is None else _checks.left_out(spec, var_list)
  return list(grads_and_vars) + left_out, {k: v for k, v in kwargs.items()
                                           if k in _APPLY_KWARGS}


def _var_list(
    spec: StepSpec,
    var_list: Optional[Iterable[Variable]]) -> Optional[List[Variable]]:
  """`var_list` (by default TF1's trainable variables), checked.

  Returns None when eager and no list is given: the optimizer then trains
  what the tape watches.
  """
  if var_list is None:
    var_list = _trainable()
    if var_list is None:
      return None
  return _checks.checked_var_list(spec, var_list)


def _trainable() -> Optional[List[Variable]]:
  """TF1's trainable variables, as a v1 optimizer takes them by default;
  None eagerly, where the optimizer trains what the tape watches."""
  with tf.init_scope():
    if tf.executing_eagerly():
      return None
  trainable: List[Variable] = (
      tf.compat.v1.trainable_variables() + tf.compat.v1.get_collection(
          tf.compat.v1.GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
  return trainable


if TYPE_CHECKING:  # What the mixin calls of its base (see `_wrap.py`).

  class _OptimizerV1(_wrap.Carrier):
    """A `tf.compat.v1.train.Optimizer` class, as the mixin calls it."""

    def compute_gradients(self, loss: Loss,
                          var_list: Optional[Iterable[Variable]] = None,
                          **kwargs: Any) -> List[GradAndVar]: ...

    def apply_gradients(self, grads_and_vars: GradsAndVars,
                        global_step: Optional[tf.Variable] = None,
                        name: Optional[str] = None) -> Any: ...

    def _trackable_children(self, save_type: Any = "checkpoint",
                            **kwargs: Any) -> Dict[str, Any]: ...

    def _lookup_dependency(self, name: str,
                           cached_dependencies: Optional[Dict[str, Any]]
                           = None) -> Any: ...
else:
  _OptimizerV1 = _wrap.Carrier


class PartialOptimizerV1(_OptimizerV1):
  """Mixed in before a TF1 optimizer class: its updates honour the spec.

  It keeps the optimizer's checkpoint layout: fully frozen variables are
  trained on a zero gradient (and restored), so they get the slots a plain
  run gives them.
  """

  @_mode.not_converted
  def compute_gradients(self, loss: Loss,
                        var_list: Optional[Iterable[Variable]] = None,
                        **kwargs: Any) -> List[GradAndVar]:
    late = self.__dict__.get("_tfpartial_late") is not None
    # Only a spec still to bind by name needs the candidate variables.
    candidates = None if not late else (
        _trainable() if var_list is None else list(tf.nest.flatten(var_list)))
    if late and candidates is None:
      # Eagerly without a var_list the optimizer trains what the tape
      # watches: a spec to bind by name binds to those.
      pairs = super().compute_gradients(loss, **kwargs)
      value = self._tfpartial_value([variable for _, variable in pairs])
    else:
      value = self._tfpartial_value(candidates)
      pairs = super().compute_gradients(
          loss, var_list=_var_list(value, var_list),
          **kwargs)
    gradients = _mask.mask_aligned(value.selection, pairs)
    return [(grad, variable) for grad, (_, variable) in zip(gradients, pairs)]

  # A `tf.train.Checkpoint` saves the slots of a v1 optimizer only for the
  # variables in its object graph: the small variables of compact specs
  # are children of the wrapped optimizer there, so their slots are saved
  # and restored (a Saver saves them as global variables anyway).
  def _trackable_children(self, save_type: Any = "checkpoint",
                          **kwargs: Any) -> Dict[str, Any]:
    children: Dict[str, Any] = super()._trackable_children(save_type,
                                                           **kwargs)
    children.update(self._tfpartial_compact_children())
    return children

  def _lookup_dependency(self, name: str,
                         cached_dependencies: Optional[Dict[str, Any]] = None
                         ) -> Any:
    found = super()._lookup_dependency(name, cached_dependencies)
    if found is None:
      found = self._tfpartial_compact_children().get(name)
    return found

  def _tfpartial_compact_children(self) -> Dict[str, Variable]:
    value: Optional[SpecValue] = self.__dict__.get("_tfpartial_spec")
    if value is None:  # Not bound yet: nothing made for it.
      return {}
    return _compact.made((variable, value.selection(variable))
                         for variable in value.step_variables)

  @_mode.not_converted
  def apply_gradients(self, grads_and_vars: GradsAndVars,
                      global_step: Optional[tf.Variable] = None,
                      name: Optional[str] = None, **kwargs: Any) -> Any:
    parent = super().apply_gradients
    pairs = _checks.pairs_of(grads_and_vars)
    return _family.step(
        self._tfpartial_family,
        self._tfpartial_value([variable for _, variable in pairs]), self,
        pairs,
        lambda receiver, masked: parent(
            masked, global_step=global_step, name=name, **kwargs),
        keep_fully_frozen=True)
