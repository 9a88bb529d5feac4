"""v1 Adam: the freeze inside the update, in one pass.

Behind TensorFlow's fused `ResourceApplyAdam` an exact freeze has to mask
the gradient, copy the variable and merge the frozen values back: passes
over its memory (see the docs' performance page). For
`tf.compat.v1.train.AdamOptimizer` (not a subclass, which may update
differently) tfpartial's compiled kernel (`_native`) makes the update's own
pass and keeps the frozen elements as it goes, leaving var, m and v exactly
as the unfused step does.

The optimizer still creates its slots, prepares its hyper-parameters and
advances its beta powers; only its per-variable dense update differs, for
the variables the step's `Plan` names (`_fused.py`). That update reads
private attributes of `AdamOptimizer` (`_lr_t`, `_beta1_t`, `_beta2_t`,
`_epsilon_t`, `_use_locking`, `_get_beta_accumulators`): a subclass's
`_apply_dense` reads them too, and there is no public way to ask for them.
They are read here only.

In a TF1 graph, eagerly and in a `tf.function` XLA does not compile (XLA
cannot compile a custom op), on CPU (the kernel has no GPU build), outside
`tf.distribute` (whose per-device copies a plan would not name), for
float32 and float64.
"""

from __future__ import annotations

from typing import Any, Optional, cast

import tensorflow as tf

from tfpartial._frozen import _tfprivate
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Gradient, Mode, Optimizer, Variable
from tfpartial._kernels import _inputs
from tfpartial._kernels import _native
from tfpartial._step import _fused


def serves(optimizer: Optimizer, mode: Mode) -> bool:
  """Whether a v1 kernel serves this step: in a TF1 graph, eagerly or in a
  `tf.function` that XLA does not compile, on CPU alone."""
  del optimizer  # Every setting of the v1 optimizers is one a kernel has.
  if mode is not Mode.TF1_GRAPH and _tfprivate.in_xla():
    return False
  return _fused.on_cpu_alone()


def frozen(grad: Gradient, variable: Variable,
           selection: Selection) -> Optional[tf.Tensor]:
  """The frozen mask a v1 kernel takes for `variable`, or None: in a TF1
  graph packed if large (a graph constant is copied many times over),
  else the selection's own bool mask (an eager tensor shares its
  memory)."""
  if (_variables.is_keras(variable) or not isinstance(variable, tf.Variable)
      or "GPU" in (variable.device or "").upper()
      or not isinstance(grad, tf.Tensor)
      or grad.dtype.base_dtype != variable.dtype.base_dtype):
    return None
  with tf.init_scope():  # A tf.function's constants are made eagerly.
    graph = not tf.executing_eagerly()
  return _inputs.kernel_mask(grad, variable, selection, packed=graph)


class V1DenseUpdate:
  """Mixed in before a tf.compat.v1 optimizer class: the variables the
  step's plan names get the kernel (`_tfpartial_kernel_update`, which each
  kernel's mixin defines), the others the class's own dense update (the
  optimizer's private `_apply_dense` and `_resource_apply_dense`, which a
  subclass overrides too)."""

  def _tfpartial_kernel_update(self, grad: tf.Tensor, var: tf.Variable,
                               frozen: tf.Tensor, ref: bool) -> Any:
    raise NotImplementedError

  def _apply_dense(self, grad: tf.Tensor, var: tf.Variable) -> Any:
    taken = _fused.planned(cast(Any, self), var)
    if taken is None:
      return super()._apply_dense(grad, var)  # type: ignore[misc]
    return self._tfpartial_kernel_update(grad, var, taken[1], ref=True)

  def _resource_apply_dense(self, grad: tf.Tensor, var: tf.Variable) -> Any:
    taken = _fused.planned(cast(Any, self), var)
    if taken is None:
      return super()._resource_apply_dense(grad, var)  # type: ignore[misc]
    return self._tfpartial_kernel_update(grad, var, taken[1], ref=False)


class FusedAdamUpdate(V1DenseUpdate):
  """Mixed in before `AdamOptimizer`: planned variables get the kernel."""

  def _tfpartial_kernel_update(self, grad: tf.Tensor, var: tf.Variable,
                               frozen: tf.Tensor, ref: bool) -> Any:
    return _update(self, grad, var, frozen, ref)


def _update(optimizer: Any, grad: tf.Tensor, var: tf.Variable,
            frozen: tf.Tensor, ref: bool) -> Any:
  library = cast(Any, _native.library())  # Loaded: the plan took `var`.
  dtype = var.dtype.base_dtype
  beta1_power, beta2_power = optimizer._get_beta_accumulators()
  hyper = [tf.cast(value, dtype) for value in (
      beta1_power, beta2_power, optimizer._lr_t, optimizer._beta1_t,
      optimizer._beta2_t, optimizer._epsilon_t)]
  m, v = optimizer.get_slot(var, "m"), optimizer.get_slot(var, "v")
  if ref:
    return library.tfpartial_apply_adam(
        var, m, v, *hyper, grad, frozen,
        use_locking=optimizer._use_locking).op
  return library.tfpartial_resource_apply_adam(
      var.handle, m.handle, v.handle, *hyper, grad, frozen,
      use_locking=optimizer._use_locking)


ADAM = _fused.FusedKind(
    base=tf.compat.v1.train.AdamOptimizer, mixin=FusedAdamUpdate,
    serves=serves, frozen=frozen)
