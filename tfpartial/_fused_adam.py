"""v1 Adam in a TF1 graph: the freeze inside the update, in one pass.

Behind TensorFlow's fused `ResourceApplyAdam` an exact freeze has to mask
the gradient, copy the variable and merge the frozen values back: passes
over its memory that cost 5-10% of a dense step (`tfpartial bench`, (g)
against (b)). For
`tf.compat.v1.train.AdamOptimizer` (not a subclass, which may update
differently) tfpartial's compiled kernel (`_native`) makes the update's own
pass and keeps the frozen elements as it goes, leaving var, m and v exactly
as the unfused step does.

The optimizer still creates its slots, prepares its hyper-parameters and
advances its beta powers; only its per-variable dense update is swapped,
for the variables of one step, while `apply_gradients` builds that step.
That update reads private attributes of `AdamOptimizer` (`_lr_t`,
`_beta1_t`, `_beta2_t`, `_epsilon_t`, `_use_locking`,
`_get_beta_accumulators`): a subclass's `_apply_dense` reads them too, and
there is no public way to ask for them. They are read here only.

Only in a TF1 graph (no `tf.function` could compile it with XLA), on CPU
(the kernel has no GPU build), outside `tf.distribute` (whose per-device
copies the swap would not recognise), for float32 and float64.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import tensorflow as tf

from tfpartial import _native
from tfpartial import _tensors
from tfpartial import _variables
from tfpartial._selection import Everything

_DENSE_UPDATES = ("_apply_dense", "_resource_apply_dense")


def for_optimizer(optimizer: Any, path: str) -> Optional["FusedAdam"]:
  """A `FusedAdam` for `optimizer` on `path` (the step's, "tf1_graph" or
  "eager"), or None when the kernel cannot serve it."""
  base = getattr(optimizer, "_tfpartial_base", type(optimizer))
  if path != "tf1_graph" or base is not tf.compat.v1.train.AdamOptimizer:
    return None
  if any(name in vars(optimizer) for name in _DENSE_UPDATES):
    return None  # Swapped already: someone else is building a step.
  if tf.distribute.has_strategy() or tf.config.list_physical_devices("GPU"):
    return None
  library = _native.library()
  return None if library is None else FusedAdam(optimizer, library)


def kernel_mask(grad: Any, variable: Any, selection: Any
                ) -> Optional[tf.Tensor]:
  """The frozen mask as the kernel takes it (one bool per element or per
  row of `variable`), or None where no kernel can serve the pair: a sparse
  or missing gradient, a dtype other than float32 and float64, a fully
  frozen variable, a mask of another shape."""
  if (not isinstance(grad, tf.Tensor)
      or tf.as_dtype(variable.dtype).base_dtype not in (tf.float32,
                                                         tf.float64)
      or isinstance(selection, Everything)):
    return None
  shape = tf.TensorShape(variable.shape)
  frozen = _tensors.frozen_mask_tensor(selection)
  if not (shape.is_fully_defined() and frozen.shape.is_fully_defined()):
    return None
  rows = shape[0] if shape.rank else 1
  if frozen.shape.num_elements() not in (shape.num_elements(), rows):
    return None
  return frozen


class FusedAdam:
  """Updates chosen variables of one step with the compiled kernel."""

  def __init__(self, optimizer: Any, library: Any):
    self.optimizer, self.library = optimizer, library
    self.frozen: Dict[Any, tf.Tensor] = {}  # variable.ref() -> bool mask

  def takes(self, grad: Any, variable: Any, selection: Any) -> bool:
    """Whether the kernel updates `variable`; if so, it will in `run`."""
    if (_variables.is_keras(variable) or not isinstance(variable, tf.Variable)
        or "GPU" in (variable.device or "").upper()):
      return False
    frozen = kernel_mask(grad, variable, selection)
    if frozen is None:
      return False
    self.frozen[variable.ref()] = frozen
    return True

  def run(self, build: Callable[[], Any]) -> Any:
    """`build()` (the optimizer's `apply_gradients`), with the kernel
    updating the variables `takes` accepted."""
    optimizer = self.optimizer
    optimizer._apply_dense = self._wrap(
        optimizer._apply_dense, self.library.tfpartial_apply_adam, ref=True)
    optimizer._resource_apply_dense = self._wrap(
        optimizer._resource_apply_dense,
        self.library.tfpartial_resource_apply_adam, ref=False)
    try:
      return build()
    finally:
      for name in _DENSE_UPDATES:
        vars(optimizer).pop(name, None)

  def _wrap(self, original, kernel, ref: bool):
    optimizer = self.optimizer

    def update(grad, var):
      frozen = self.frozen.get(var.ref())
      if frozen is None:
        return original(grad, var)
      dtype = var.dtype.base_dtype
      beta1_power, beta2_power = optimizer._get_beta_accumulators()
      hyper = [tf.cast(value, dtype) for value in (
          beta1_power, beta2_power, optimizer._lr_t, optimizer._beta1_t,
          optimizer._beta2_t, optimizer._epsilon_t)]
      m, v = optimizer.get_slot(var, "m"), optimizer.get_slot(var, "v")
      if ref:
        return kernel(var, m, v, *hyper, grad, frozen,
                      use_locking=optimizer._use_locking).op
      return kernel(var.handle, m.handle, v.handle, *hyper, grad, frozen,
                    use_locking=optimizer._use_locking)

    return update
