"""The optimizer families: one row each, instead of `isinstance` chains.

Each family lives in its own module (`_v1`, `_keras`, `_tf_keras`) and adds
one `_family.Family` row here; `family_of` finds an optimizer's row. The
wrapped classes of the built-in optimizers of the Keras families are made,
and so registered with Keras, when this module is imported: loading a saved
model then finds them, as Keras asks of custom objects.
"""

from __future__ import annotations

from typing import Tuple

from tfpartial._families import _fused_adam
from tfpartial._families import _fused_keras
from tfpartial._families import _fused_sgd
from tfpartial._families import _fused_tf_keras
from tfpartial._families import _keras
from tfpartial._families import _tf_keras
from tfpartial._families import _v1
from tfpartial._families import _wrap
from tfpartial._families._family import Family

FAMILIES: Tuple[Family, ...] = (
    Family(
        name="tf.compat.v1.train.Optimizer",
        owns=_v1.owns,
        apply=_v1.apply,
        gradients=_v1.gradients,
        mixin=_v1.PartialOptimizerV1,
        fused=lambda: (_fused_adam.ADAM, _fused_sgd.GRADIENT_DESCENT,
                       _fused_sgd.MOMENTUM),
        lazy_rows=_v1.lazy_rows,
    ),
    Family(
        name="keras.optimizers.Optimizer",
        owns=_keras.owns,
        apply=_keras.apply,
        gradients=_keras.gradients,
        mixin=_keras.PartialKerasOptimizer,
        fused=lambda: _fused_keras.KINDS,
        register=_keras.register,
        builtins=_keras.builtins,
    ),
    Family(
        name="Keras 2 / tf_keras optimizer",
        owns=_tf_keras.owns,
        apply=_tf_keras.apply,
        gradients=_tf_keras.gradients,
        mixin=_tf_keras.PartialTfKerasOptimizer,
        fused=_fused_tf_keras.kinds,
        register=_tf_keras.register,
        builtins=_tf_keras.builtins,
    ),
)


def family_of(optimizer: object) -> Family:
  """The family `optimizer` belongs to; TypeError if it is not an optimizer."""
  for family in FAMILIES:
    if family.owns(optimizer):
      return family
  known = ", ".join(family.name for family in FAMILIES)
  raise TypeError(
      f"`optimizer` must be an optimizer ({known}); got "
      f"{type(optimizer).__module__}.{type(optimizer).__qualname__}.")


for _row in FAMILIES:
  _wrap.register_builtins(_row)
