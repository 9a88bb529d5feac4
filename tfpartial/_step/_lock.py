"""Steps from several threads: one restoring step at a time, per variable use.

An exact freeze that restores frozen elements after the optimizer's update
(`_restore.py`) reads the variable before the update and writes it after.
Two such steps running at once on one variable could each read what the
other is about to undo (a frozen element moved by the other's momentum) or
write back a trainable element the other just updated (a lost update).
Plain TensorFlow loses neither, so neither may tfpartial: from its snapshot
to its restore, a step holds a lock.

* Eager code: a Python lock, held for the step.
* `tf.function` and TF1 graphs, whose ops run after Python has returned: a
  TensorFlow mutex (`tf.raw_ops.MutexLock`), taken once the step's
  gradients are computed (so threads still compute those in parallel),
  before the snapshot, and released after the restore. The optimizer's
  own ops are built as they would be without tfpartial: its writes to a
  variable follow the snapshot's read of it and precede the restore, by
  the graph's own ordering (automatic control dependencies in a function,
  the step's control dependencies in a TF1 graph), so they fall inside the
  lock.

Not under XLA (which cannot compile the mutex ops) nor under a
`tf.distribute` strategy (whose replicas step together and synchronise
among themselves); a step nested in another (a wrapped optimizer inside a
wrapped one) runs under its parent's lock. Steps whose variables the
compiled kernel updates need no lock for the freeze: the kernel never
moves a frozen element, so there is nothing to restore. Eagerly, though,
a kernel's step of an optimizer that counts its steps with a read and
then a write (Keras 3's `iterations`) holds the Python lock, so that
threads sharing it lose no step (`graph=False`: in a function there is
nothing for the mutex to order that step's count by).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import weakref
from typing import Any, Iterator, List, Optional, Sequence

import tensorflow as tf

from tfpartial._frozen import _tfprivate

_EAGER = threading.RLock()
_HELD: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "tfpartial_step_lock_held", default=False)
# The mutex steps in tf.function share: made eagerly, captured by every
# function. TF1 graph -> the name of its mutex op (a name, not the tensor,
# which would keep its graph alive through the weak key).
_FUNCTION_MUTEX: List[tf.Tensor] = []
_GRAPH_MUTEX: "weakref.WeakKeyDictionary[tf.Graph, str]" = (
    weakref.WeakKeyDictionary())
_MAKING = threading.Lock()


class GraphLock:
  """The mutex, taken in a graph: snapshots wait for `taken`; `release`
  comes after the restores."""

  def __init__(self, mutex: tf.Tensor, gradients: Sequence[Any]):
    inputs = [g.values if isinstance(g, tf.IndexedSlices) else g
              for g in gradients]
    with tf.control_dependencies(inputs):
      self.taken = tf.raw_ops.MutexLock(mutex=mutex)

  def release(self, after: Sequence[Any]) -> tf.Operation:
    with tf.control_dependencies(list(after)):
      return tf.raw_ops.ConsumeMutexLock(mutex_lock=self.taken)


@contextlib.contextmanager
def held(gradients: Sequence[Any], graph: bool = True
         ) -> Iterator[Optional[GraphLock]]:
  """Holds the step lock; yields the `GraphLock` when the step is being
  built into a graph (the path then takes and releases it), else None.
  `graph=False`: the Python lock of eager code only; a graph gets none."""
  if _HELD.get() or tf.distribute.has_strategy():
    yield None
    return
  token = _HELD.set(True)
  try:
    if tf.executing_eagerly():
      with _EAGER:
        yield None
    elif _tfprivate.in_xla() or not graph:
      yield None
    else:
      yield GraphLock(_mutex(), gradients)
  finally:
    _HELD.reset(token)


def _mutex() -> tf.Tensor:
  """The mutex of the graph being built (made once)."""
  with _MAKING, tf.init_scope():
    if tf.executing_eagerly():  # Inside a tf.function.
      if not _FUNCTION_MUTEX:
        _FUNCTION_MUTEX.append(tf.raw_ops.MutexV2(shared_name=""))
      return _FUNCTION_MUTEX[0]
    graph = tf.compat.v1.get_default_graph()
    name = _GRAPH_MUTEX.get(graph)
    if name is not None:
      return graph.get_tensor_by_name(name)
    with graph.name_scope(None):  # At the top level: one per graph.
      mutex = tf.raw_ops.MutexV2(shared_name="", name="tfpartial_step_lock")
    _GRAPH_MUTEX[graph] = mutex.name
    return mutex
