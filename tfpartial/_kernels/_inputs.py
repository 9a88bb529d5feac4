"""The inputs the library's update ops take, made from a selection.

Every kernel of `cc/` reads a frozen mask as `common.h`'s `ReadFrozen`
does: one bool per element or per row (the first axis), or, from
`PACKED_FROM` elements, one bit per element packed eight to a byte
(NumPy's little bit order); or, for a mostly frozen variable, the
trainable elements' int32 offsets, rising (`CheckOffsets`). This module
makes those tensors (through `_frozen/_tensors`, once per selection and
graph) and says which pairs of a gradient and a variable the ops can take
at all (dtype, shape). Which variables of a step get a kernel is the
step's choice (`_step/_fused`).
"""

from __future__ import annotations

from typing import Optional

import tensorflow as tf

from tfpartial._frozen import _tensors
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Gradient, Variable


def kernel_mask(grad: Gradient, variable: Variable,
                selection: Selection, sparse: bool = False,
                packed: bool = False) -> Optional[tf.Tensor]:
  """The frozen mask as a kernel takes it (one bool per element or per row
  of `variable`), or None where no kernel can serve the pair: a sparse or
  missing gradient, a dtype other than float32 and float64, a mask of
  another shape. A fully frozen variable gets a True per row: the kernel
  then advances the optimizer's state for it as a zero gradient would,
  and keeps the variable. `sparse`: the kernel takes a `tf.IndexedSlices`
  gradient of a variable with rows too. `packed`: the kernel takes a
  large element mask packed one bit per element (`PACKED_FROM`)."""
  if sparse and isinstance(grad, tf.IndexedSlices):
    shape = tf.TensorShape(variable.shape)
    if (not shape.rank or grad.values.dtype.base_dtype not in (
            tf.float32, tf.float64)
        or not grad.values.shape.is_compatible_with(
            tf.TensorShape([None]).concatenate(shape[1:]))):
      return None
    return _checked_mask(variable, selection)
  if (not isinstance(grad, tf.Tensor)
      or grad.dtype.base_dtype not in (tf.float32, tf.float64)
      or not grad.shape.is_compatible_with(variable.shape)):
    return None
  return _checked_mask(variable, selection, packed)


# An element mask of at least this many elements goes to a kernel that can
# take it packed (the v1 kernels, in TF1 graphs) as one bit per element. A
# graph constant is copied several times over as a session starts (the
# graph's proto, its serialized forms, the constant's kernel), each copy of
# a bool mask eight times the packed one (docs/kernel.md, "Large masks in
# TF1 graphs: packed bits"; bench row (m)). Below it, a mask's copies are
# small and a bool mask is read without unpacking.
PACKED_FROM = 1 << 22


def _checked_mask(variable: Variable, selection: Selection,
                  packed: bool = False) -> Optional[tf.Tensor]:
  if tf.as_dtype(variable.dtype).base_dtype not in (tf.float32, tf.float64):
    return None
  shape = tf.TensorShape(variable.shape)
  if not shape.is_fully_defined():
    return None
  rows = shape[0] if shape.rank else 1
  if selection.is_everything:
    return tf.ones([rows] if shape.rank else [], tf.bool)
  if (packed and selection.packable
      and selection.size == shape.num_elements()
      and selection.size >= PACKED_FROM):
    return _tensors.packed_mask_tensor(selection)
  frozen = _tensors.frozen_mask_tensor(selection)
  if not frozen.shape.is_fully_defined():
    return None
  if frozen.shape.num_elements() not in (shape.num_elements(), rows):
    return None
  return frozen


# A kernel that can takes the trainable elements' offsets (4 bytes each)
# in place of the mask (1 byte per element) when fewer than 1/MOSTLY_FROZEN
# of the elements train: it then reads and writes only those.
MOSTLY_FROZEN = 8


def mostly_frozen(selection: Selection) -> bool:
  """Whether under 1/`MOSTLY_FROZEN` of a static selection's elements
  train (from its cached counts), in a variable under 2**31 elements."""
  if selection.is_everything or selection.mask_variables:
    return False
  size = selection.size
  return (0 < size < 2**31
          and (size - selection.frozen_count) * MOSTLY_FROZEN < size)


def trainable_offsets(selection: Selection) -> Optional[tf.Tensor]:
  """The trainable offsets tensor (`_tensors`) of a mostly frozen
  selection, else None."""
  if not mostly_frozen(selection):
    return None
  return _tensors.trainable_offsets_tensor(selection)
