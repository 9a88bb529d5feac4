"""The exact-freeze step: snapshot before the update, restore after it.

Masking gradients is not enough to keep an element fixed: weight decay,
FTRL and the proximal optimizers move weights whose gradient is zero, and
momentum or Adam state left from earlier steps keeps moving them. So each
step reads the frozen values just before the optimizer runs and writes them
back just after, with one fused select per variable. The snapshot is taken
inside the step, never kept between steps, so a value the user assigns or
restores between steps is the value that stays.

Two paths share one interface, `run(restorable, apply)`; `_step.py` picks
one per call:

* Eager, including `tf.function`: the snapshot is the value read before the
  update. Resource updates copy on write while that read is alive, and
  `tf.function` orders reads and writes of one variable as written.
* TF1 graph: ref variables update in place, so a read is not a snapshot.
  The values go to a non-trainable shadow variable, and control
  dependencies order snapshot -> update -> restore inside one train op.
  With ref variables the step also waits for every gradient before it
  writes anything, so no gradient reads a half-updated variable.
"""

from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple

import tensorflow as tf

from tfpartial import _tensors
from tfpartial._selection import Selection
from tfpartial._types import Variable
from tfpartial import _variables

# (variable, its frozen selection) for every variable the step updates.
Restorable = Sequence[Tuple[Variable, Selection]]


def read(variable: Variable) -> tf.Tensor:
  """The value of `variable` now: a new read, ordered where it is made."""
  return _variables.storage(variable).read_value()


def restore_frozen(variable: Variable, selection: Selection,
                   before: tf.Tensor) -> Any:
  """Writes `before` back into the frozen elements of `variable`."""
  if selection.is_everything:
    return _variables.storage(variable).assign(before, read_value=False)
  frozen = _tensors.frozen_mask_tensor(selection)
  kept = tf.where(frozen, before, read(variable))
  return _variables.storage(variable).assign(kept, read_value=False)


class EagerPath:
  """Snapshot by reading; ordering by program order."""

  name = "eager"

  def run(self, restorable: Restorable, apply: Callable[[], Any],
          gradients: Sequence[Any] = ()) -> Any:
    del gradients  # Reads of resource variables are snapshots already.
    with tf.name_scope("tfpartial_snapshot"):
      befores = [read(variable) for variable, _ in restorable]
    result = apply()
    with tf.name_scope("tfpartial_restore"):
      for (variable, selection), before in zip(restorable, befores):
        restore_frozen(variable, selection, before)
    return result


class GraphPath:
  """Snapshot into shadow variables; ordering by control dependencies."""

  name = "tf1_graph"

  def run(self, restorable: Restorable, apply: Callable[[], Any],
          gradients: Sequence[Any] = ()) -> Any:
    if not restorable:
      return apply()
    gate = []
    if any(_is_ref(variable) for variable, _ in restorable):
      gate = [g.values if isinstance(g, tf.IndexedSlices) else g
              for g in gradients]
    with tf.name_scope("tfpartial_snapshot"), tf.control_dependencies(gate):
      shadows = [shadow_variable(variable) for variable, _ in restorable]
      snapshots = [
          shadow.assign(read(variable), read_value=False)
          for shadow, (variable, _) in zip(shadows, restorable)
      ]
    with tf.control_dependencies(snapshots):
      result = apply()
    with tf.control_dependencies(_dependencies(result)):
      with tf.name_scope("tfpartial_restore"):
        restores = [
            restore_frozen(variable, selection, shadow.read_value())
            for shadow, (variable, selection) in zip(shadows, restorable)
        ]
    return tf.group(*restores, name="tfpartial_train")


def shadow_variable(variable: Variable) -> tf.Variable:
  """A non-trainable variable shaped like `variable`, in no collection.

  In no collection, so `Saver()`, `global_variables_initializer()` and
  `report_uninitialized_variables()` never see it: checkpoints are the same
  with and without tfpartial. It needs no initializer, as every step assigns
  it before reading it.

  Of the same kind as `variable`: a resource variable stores a shared read
  and relies on copy-on-write, which a ref variable's in-place update
  skips; a ref shadow's `Assign` always copies.
  """
  variable = _variables.storage(variable)
  with tf.init_scope(), tf.device(variable.device):
    return tf.compat.v1.Variable(
        lambda: tf.zeros(variable.shape, variable.dtype.base_dtype),
        trainable=False,
        collections=[],
        use_resource=not _is_ref(variable),
        name=_variables.checkpoint_name(variable).replace(":", "_")
        + "_tfpartial_shadow")


def _is_ref(variable: Variable) -> bool:
  """Whether `variable` is a TF1 ref variable (dtype `float32_ref`)."""
  dtype = _variables.storage(variable).dtype
  return dtype != dtype.base_dtype


def _dependencies(result: Any) -> List[Any]:
  if isinstance(result, (tf.Operation, tf.Tensor)):
    return [result]
  if isinstance(result, tf.Variable):
    return [result.op]
  return []
