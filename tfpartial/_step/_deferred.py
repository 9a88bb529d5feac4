"""Masked gradients that cost nothing unless they are read.

A wrapped tf.compat.v1 optimizer's `compute_gradients` returns gradients
whose frozen elements are exactly 0, for the user who reads or changes
them before `apply_gradients`. Most code never does (`minimize` is
`compute_gradients` then `apply_gradients`), and the step then has no
use for the masked gradient: a compiled kernel and a compact step read
only the trainable elements of the gradient they are given, and the
unfused step masks it again. So in a graph (a TF1 graph, a
`tf.function`) `masked_for_reading` builds each masked gradient from what
the step holds anyway, and `unmasked` gives the step back the gradient
it masked when it is handed that very tensor, for the same selection:

- the masked gradient is an op nothing runs unless it is fetched (a TF1
  session runs only what a fetch needs; a function prunes what no output
  needs), so the train op does not compute a select it ignores;
- its mask is the one the step's kernel takes (the packed bits a v1
  kernel takes in a TF1 graph from `_kernels/_inputs.PACKED_FROM`
  elements, unpacked only when read; the trainable offsets of a compact
  element mask), so no bool mask the size of the variable enters a TF1
  graph for it, whose session would copy it several times over as it
  starts (docs/performance.md, "Memory").

Exact either way: the masked gradient has an exact +0 where frozen and
the gradient's own bits elsewhere, and the step makes of the gradient it
is given back what it makes of the masked one (a kernel and a compact
step never read a frozen element's gradient; the unfused step masks it
with the same mask). Eagerly every op runs as it is made: there nothing
is deferred, and nothing is handed back.
"""

from __future__ import annotations

import weakref
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _tensors
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import GradAndVar, Gradient, GradsAndVars
from tfpartial._kernels import _inputs
from tfpartial._step import _mask
from tfpartial._step import _plan
from tfpartial._step._plan import Action

# graph -> {masked gradient's name: (its gradient's name, the variable's
# name, the selection it masked)}. Names, not tensors: a tensor would keep
# its graph alive through the weak key.
_Masked = Tuple[str, str, "weakref.ref[Selection]"]
_MASKED: "weakref.WeakKeyDictionary[Any, Dict[str, _Masked]]" = (
    weakref.WeakKeyDictionary())


def masked_for_reading(lookup: _plan.Lookup,
                       grads_and_vars: GradsAndVars) -> List[Gradient]:
  """As `_mask.mask_aligned` (one gradient per pair, frozen elements
  exactly 0); in a graph, each masked dense gradient is made so that it
  runs only when read, and remembered for `unmasked`."""
  entries = _plan.plan(list(grads_and_vars), lookup, keep_fully_frozen=True)
  gradients = []
  for entry in entries:
    grad = entry.grad
    if (entry.action is not Action.MASK or entry.selection is None
        or not isinstance(grad, tf.Tensor) or tf.executing_eagerly()):
      gradients.append(_mask.masked(entry))
      continue
    masked = _deferred_mask(grad, entry.selection)
    _remember(masked, grad, entry.variable, entry.selection)
    gradients.append(masked)
  return gradients


def unmasked(lookup: _plan.Lookup,
             grads_and_vars: GradsAndVars) -> List[GradAndVar]:
  """The pairs, each gradient `masked_for_reading` made for the same
  variable and selection replaced by the gradient it masked."""
  pairs = []
  for grad, variable in grads_and_vars:
    pairs.append((_original(grad, variable, lookup), variable))
  return pairs


def _deferred_mask(grad: tf.Tensor, selection: Selection) -> tf.Tensor:
  """`grad` with an exact +0 where frozen, from the mask the step holds."""
  size = grad.shape.num_elements()
  if (size is not None and selection.compact
      and selection.row_set is None and _inputs.mostly_frozen(selection)):
    # A compact element mask: its trainable offsets, which the compact
    # step gathers by.
    offsets = _tensors.trainable_offsets_tensor(selection)
    with tf.name_scope("tfpartial_mask"):
      flat = tf.reshape(grad, [-1])
      kept = tf.tensor_scatter_nd_update(
          tf.zeros_like(flat), offsets[:, None], tf.gather(flat, offsets))
      return tf.reshape(kept, tf.shape(grad))
  if size is not None and _packed_here(selection, size):
    packed = _tensors.packed_mask_tensor(selection)
    with tf.name_scope("tfpartial_mask"):
      return _mask.zero_where(_unpacked(packed, grad.shape), grad)
  return _mask.mask_gradient(grad, selection)


def _packed_here(selection: Selection, size: int) -> bool:
  """Whether a v1 kernel would take `selection` packed here: a large
  element mask of the full shape, in a TF1 graph."""
  if not (selection.packable and selection.size == size
          and size >= _inputs.PACKED_FROM):
    return False
  with tf.init_scope():
    return not tf.executing_eagerly()


def _unpacked(packed: tf.Tensor, shape: tf.TensorShape) -> tf.Tensor:
  """The frozen mask of `shape`, unpacked from its `packed` bits (NumPy's
  little bit order: bit i of a byte is element 8 * byte + i)."""
  bits = tf.constant(1 << np.arange(8, dtype=np.uint8))
  frozen = tf.not_equal(tf.bitwise.bitwise_and(packed[:, None], bits), 0)
  size = shape.num_elements()
  return tf.reshape(tf.reshape(frozen, [-1])[:size], shape)


def _remember(masked: tf.Tensor, grad: tf.Tensor, variable: Any,
              selection: Selection) -> None:
  per_graph = _MASKED.setdefault(masked.graph, {})
  per_graph[masked.name] = (grad.name, variable.name, weakref.ref(selection))


def _original(grad: Gradient, variable: Any,
              lookup: _plan.Lookup) -> Gradient:
  if not isinstance(grad, tf.Tensor) or tf.executing_eagerly():
    return grad
  found: Optional[_Masked] = _MASKED.get(grad.graph, {}).get(grad.name)
  if found is None:
    return grad
  name, variable_name, selection = found
  if (variable_name != getattr(variable, "name", None)
      or selection() is None or selection() is not lookup(variable)):
    return grad
  original: tf.Tensor = grad.graph.get_tensor_by_name(name)
  return original
