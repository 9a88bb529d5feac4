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
TensorFlow's gather everywhere else: TF1 ref variables, and a variable of
another task (a parameter server's shard), whose task and the worker that
steps it may not have loaded the library, as the write-back's compiled
scatter does.
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
  float64, on a CPU of this task with no GPU visible, in a step XLA
  does not compile, and not a TF1 ref variable."""
  values = _variables.storage(values)
  dtype = tf.as_dtype(values.dtype)
  return (dtype == dtype.base_dtype  # Not a TF1 ref variable.
          and dtype in _FLOATS and _here(values)
          and not _has_gpu() and not _tfprivate.in_xla())


def _here(values: Any) -> bool:
  """Whether `values` is placed on a CPU of this task, or nowhere yet."""
  device = tf.DeviceSpec.from_string(values.device or "")
  return ((device.device_type or "CPU").upper() == "CPU"
          and device.job in (None, "localhost"))


def gather(values: tf.Tensor, offsets: tf.Tensor, *,
           read_from: Optional[Any] = None,
           gradient_of: Optional[Any] = None) -> tf.Tensor:
  """The elements of `values` (a tensor: a variable's value read now, or a
  gradient) at the flat `offsets` (int32, rising), as a vector.
  `read_from`: the variable `values` was read from (which must be one the
  compiled ops serve); `gradient_of`: the variable `values` is the
  gradient of (which must be on this task)."""
  if (compiled(values)
      and (read_from is None or compiled(read_from))
      and (gradient_of is None
           or _here(_variables.storage(gradient_of)))):
    library = _native.library()
    if library is not None:
      result: tf.Tensor = library.tfpartial_gather_offsets(values, offsets)
      return result
  return tf.gather(tf.reshape(values, [-1]), offsets)


@functools.lru_cache(maxsize=None)
def _has_gpu() -> bool:
  # The devices a process sees are fixed once TensorFlow has started.
  return bool(tf.config.list_physical_devices("GPU"))
