"""Copies by flat offset, for a compact element step: which op makes them.

A compact element step gathers the trainable elements of the variable and
of its gradient into vectors, by their flat offsets (`_compact`'s
`ElementLayout`). The compiled gather (`TfpartialGatherOffsets`,
`_kernels/cc/scatter.h`) reads each element with one load; TensorFlow's
`GatherV2` gives the same bits through a general slice copy, several
times slower an element on a large variable (docs/performance.md, "Sparse
fine-tuning"). The compiled op serves where the library is loaded, for a
float32 or float64 resource variable and gradient on the CPU with no GPU
visible, in a step XLA does not compile (XLA cannot compile a custom op);
TensorFlow's gather everywhere else, TF1 ref variables included (as the
write-back's compiled scatter does).
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import tensorflow as tf

from tfpartial._frozen import _tfprivate
from tfpartial._frozen import _variables
from tfpartial._kernels import _native

_FLOATS = (tf.float32, tf.float64)


def compiled(values: Any) -> bool:
  """Whether the compiled copies by offset may serve `values` (a variable
  or a tensor; then they do, where the library is loaded): float32 or
  float64, on the CPU with no GPU visible, in a step XLA does not
  compile, and not a TF1 ref variable."""
  values = _variables.storage(values)
  dtype = tf.as_dtype(values.dtype)
  return (dtype == dtype.base_dtype  # Not a TF1 ref variable.
          and dtype in _FLOATS
          and "GPU" not in (values.device or "").upper()
          and not _has_gpu() and not _tfprivate.in_xla())


def gather(values: tf.Tensor, offsets: tf.Tensor,
           variable: Optional[Any] = None) -> tf.Tensor:
  """The elements of `values` (a tensor: a variable's value read now, or a
  gradient) at the flat `offsets` (int32, rising), as a vector.
  `variable`: the variable `values` was read from, if it was."""
  if compiled(values) and (variable is None or compiled(variable)):
    library = _native.library()
    if library is not None:
      result: tf.Tensor = library.tfpartial_gather_offsets(values, offsets)
      return result
  return tf.gather(tf.reshape(values, [-1]), offsets)


@functools.lru_cache(maxsize=None)
def _has_gpu() -> bool:
  # The devices a process sees are fixed once TensorFlow has started.
  return bool(tf.config.list_physical_devices("GPU"))
