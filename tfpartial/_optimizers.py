"""Optimizer families: how each kind of optimizer is applied, minimized, wrapped.

A small table instead of `isinstance` chains through the code; each family
lives in its own module and adds one row here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Tuple

from tfpartial import _fused_adam
from tfpartial import _fused_keras
from tfpartial import _keras
from tfpartial import _tf_keras
from tfpartial import _v1
from tfpartial._types import Optimizer


@dataclasses.dataclass(frozen=True)
class Family:
  """What tfpartial needs to know about one kind of optimizer."""

  name: str
  owns: Callable[[Any], bool]
  apply: Callable[[Optimizer, list, dict], Any]
  minimize: Callable[..., Any]
  wrap: Callable[[Any, Optimizer], Optimizer]
  # Whether the optimizer's sparse update writes only the gradient's rows.
  lazy_rows: Callable[[Optimizer], bool] = lambda optimizer: False
  # An update that keeps the freeze itself on a path ("tf1_graph",
  # "eager"), or None.
  fused: Callable[[Optimizer, str], Any] = lambda optimizer, path: None


FAMILIES: Tuple[Family, ...] = (
    Family(
        name="tf.compat.v1.train.Optimizer",
        owns=_v1.owns,
        apply=_v1.apply,
        minimize=_v1.minimize,
        wrap=_v1.wrap,
        lazy_rows=_v1.lazy_rows,
        fused=_fused_adam.for_optimizer,
    ),
    Family(
        name="keras.optimizers.Optimizer",
        owns=_keras.owns,
        apply=_keras.apply,
        minimize=_keras.minimize,
        wrap=_keras.wrap,
        fused=_fused_keras.for_optimizer,
    ),
    Family(
        name="Keras 2 / tf_keras optimizer",
        owns=_tf_keras.owns,
        apply=_tf_keras.apply,
        minimize=_tf_keras.minimize,
        wrap=_tf_keras.wrap,
    ),
)


def family_of(optimizer: Any) -> Family:
  """The family `optimizer` belongs to; TypeError if it is not an optimizer."""
  for family in FAMILIES:
    if family.owns(optimizer):
      return family
  known = ", ".join(family.name for family in FAMILIES)
  raise TypeError(
      f"`optimizer` must be an optimizer ({known}); got "
      f"{type(optimizer).__module__}.{type(optimizer).__qualname__}.")
