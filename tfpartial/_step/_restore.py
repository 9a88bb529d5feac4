"""The exact-freeze step: snapshot before the update, restore after it.

Masking gradients is not enough to keep an element fixed: weight decay,
FTRL and the proximal optimizers move weights whose gradient is zero, and
momentum or Adam state left from earlier steps keeps moving them. So each
step reads the frozen values just before the optimizer runs and writes them
back just after, with one fused select per variable. The snapshot is taken
inside the step, never kept between steps, so a value the user assigns or
restores between steps is the value that stays.

Each variable the step updates gets a guard (`before` and `after` the
update): a dense one, or one for the rows of a sparse update when the
optimizer's sparse update is lazy. Two paths run the guards around the
update, `run(guards, apply)`; `_mode.current_path` picks one per call:

* Eager, including `tf.function`: the snapshot is the value read before the
  update. Resource updates copy on write while that read is alive, and
  `tf.function` orders reads and writes of one variable as written.
* TF1 graph: control dependencies order snapshot -> update -> restore
  inside one train op. A resource variable's snapshot is a read, as above;
  a TF1 ref variable updates in place, so a read of it is not a snapshot:
  its values go to a non-trainable shadow variable. With ref variables the
  step also waits for every gradient before it writes anything, so no
  gradient reads a half-updated variable.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import tensorflow as tf

from tfpartial._frozen import _tensors
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import Selection
from tfpartial._frozen._types import Mode, Variable
from tfpartial._step import _distribute
from tfpartial._step import _lock

def read(variable: Variable) -> tf.Tensor:
  """The value of `variable` now: a new read, ordered where it is made."""
  return _variables.storage(variable).read_value()


def restore_frozen(variable: Variable, selection: Selection,
                   before: tf.Tensor) -> Any:
  """Writes `before` back into the frozen elements of `variable`."""
  if selection.is_everything:
    return _distribute.update(variable, _assign, before)
  frozen = _tensors.frozen_mask_tensor(selection)
  kept = _tensors.select(frozen, before, read(variable))
  return _distribute.update(variable, _assign, kept)


def _assign(storage: tf.Variable, value: tf.Tensor) -> Any:
  return storage.assign(value, read_value=False)


def scatter(storage: tf.Variable,
            rows_and_values: Tuple[tf.Tensor, tf.Tensor]) -> Any:
  """Writes rows of a variable: `(rows, values)` -> `scatter_update`."""
  rows, values = rows_and_values
  return storage.scatter_update(tf.IndexedSlices(values, rows))


class Guard:
  """Keeps one variable's frozen elements across an update.

  `before(graph)` returns (an op the update must wait for, or None; a token)
  and `after(token)` the op that writes the frozen values back.
  """

  variable: Variable

  def before(self, graph: bool) -> Tuple[Optional[Any], Any]:
    raise NotImplementedError

  def after(self, token: Any) -> Any:
    raise NotImplementedError


class DenseGuard(Guard):
  """The whole variable: snapshot it, then one select over all of it."""

  def __init__(self, variable: Variable, selection: Selection):
    self.variable, self.selection = variable, selection

  def before(self, graph: bool) -> Tuple[Optional[Any], Any]:
    if not is_ref(self.variable):
      # A read of a resource variable is a snapshot: updates copy on write.
      value = read(self.variable)
      return (value.op if graph else None), value
    shadow = shadow_variable(self.variable)
    return shadow.assign(read(self.variable), read_value=False), shadow

  def after(self, token: Any) -> Any:
    before = token.read_value() if isinstance(token, tf.Variable) else token
    return restore_frozen(self.variable, self.selection, before)


class RowsGuard(Guard):
  """Only the rows a sparse update names: the optimizer touches no others.

  For optimizers whose sparse update is lazy (`scatter_*` on the rows of
  the gradient), this costs in proportion to the rows of the batch, not to
  the table.
  """

  def __init__(self, variable: Variable, selection: Selection,
               indices: tf.Tensor):
    self.variable, self.selection, self.indices = variable, selection, indices

  def before(self, graph: bool) -> Tuple[Optional[Any], Any]:
    rows = tf.unique(tf.reshape(tf.cast(self.indices, tf.int64), [-1])).y
    # A gather is a copy, so it is a snapshot even of a TF1 ref variable.
    values = gather_rows(self.variable, rows)
    return (values.op if graph else None), (rows, values)

  def after(self, token: Any) -> Any:
    rows, before = token
    if self.selection.is_everything:
      kept = before
    else:
      frozen = tf.gather(_tensors.frozen_mask_tensor(self.selection), rows)
      kept = _tensors.select(frozen, before, gather_rows(self.variable, rows))
    return _distribute.update(self.variable, scatter, (rows, kept))


def gather_rows(variable: Variable, rows: tf.Tensor) -> tf.Tensor:
  """A copy of `rows` of `variable`, read where it is made."""
  storage = _variables.storage(variable)
  if isinstance(storage, tf.distribute.DistributedValues):
    # A mirrored variable has no sparse_read; in replica context its
    # handle is this replica's component.
    if tf.distribute.has_strategy() and not (
        tf.distribute.in_cross_replica_context()):
      return tf.raw_ops.ResourceGather(resource=storage.handle, indices=rows,
                                       dtype=storage.dtype)
    return tf.gather(read(variable), rows)
  if is_ref(variable):  # Ref variables have no sparse_read.
    return tf.gather(read(variable), rows)
  return storage.sparse_read(rows)


class EagerPath:
  """Snapshot by reading; ordering by program order."""

  mode = Mode.EAGER

  def run(self, guards: Sequence[Guard], apply: Callable[[], Any],
          gradients: Sequence[Any] = (),
          in_place: Sequence[Variable] = (),
          lock: Optional[_lock.GraphLock] = None) -> Any:
    """`lock`: taken before the snapshot, released after the restore, in a
    function (eager code runs the step under a Python lock instead)."""
    del gradients  # Reads of resource variables are snapshots already.
    del in_place  # Only a TF1 graph updates in place without a guard.
    taken = [] if lock is None else [lock.taken]
    with tf.name_scope("tfpartial_snapshot"), tf.control_dependencies(taken):
      tokens = [guard.before(graph=False)[1] for guard in guards]
    result = apply()
    with tf.name_scope("tfpartial_restore"):
      restores = [guard.after(token) for guard, token in zip(guards, tokens)]
    if lock is not None:
      lock.release(restores)  # A function runs it: the op is stateful.
    return result


class GraphPath:
  """Snapshot into shadow variables; ordering by control dependencies."""

  mode = Mode.TF1_GRAPH

  def run(self, guards: Sequence[Guard], apply: Callable[[], Any],
          gradients: Sequence[Any] = (),
          in_place: Sequence[Variable] = (),
          lock: Optional[_lock.GraphLock] = None) -> Any:
    """`in_place`: variables whose update keeps the freeze itself (the
    compiled kernel); they need no guard, but a ref variable among them
    still waits for every gradient. `lock`: taken before the snapshot,
    released after the restore."""
    variables = [guard.variable for guard in guards] + list(in_place)
    if not any(is_ref(variable) for variable in variables):
      if not guards:
        return apply()
      gate = []
    else:
      gate = [g.values if isinstance(g, tf.IndexedSlices) else g
              for g in gradients]
    taken = [] if lock is None else [lock.taken]
    with tf.name_scope("tfpartial_snapshot"), tf.control_dependencies(
        gate + taken):
      befores = [guard.before(graph=True) for guard in guards]
    graph = tf.compat.v1.get_default_graph()
    first = len(graph.get_operations())
    with tf.control_dependencies(
        gate + [op for op, _ in befores if op is not None]):
      result = apply()
    if not guards:
      return result
    whole = _dependencies(result)
    writers = (_writers(graph.get_operations()[first:], variables)
               if whole and not gate else {})
    restores = []
    with tf.name_scope("tfpartial_restore"):
      for guard, (_, token) in zip(guards, befores):
        # Each restore waits for what the update built that takes its
        # variable, not for the whole update: restores run as their own
        # variable's update ends. Else (none found, ref variables) after
        # all of it.
        with tf.control_dependencies(writers.get(id(guard.variable))
                                     or whole):
          restores.append(guard.after(token))
    done = restores + whole
    if lock is not None:
      done = [lock.release(done)]
    return tf.group(*done, name="tfpartial_train")


def _writers(ops: Sequence[tf.Operation],
             variables: Sequence[Variable]) -> Dict[int, List[tf.Operation]]:
  """id(variable) -> the ops of `ops` (made by the update, in order) that
  take the variable's handle, directly or through `Identity` ops: every op
  that can write it (and its reads). Empty, so every restore waits for the
  whole update, under a distribution strategy, when a variable has no
  resource handle, when a handle flows on through another op (a `Switch`
  or `Enter` of TF1 control flow: the write behind it is not followed), or
  when an op that takes it calls a function (an `If` or `While` of TF2
  control flow, a function call): the session lowers such an op, and a
  control edge on it then waits only for the branch to start, not for the
  write inside (its data outputs, which the update's own op waits for, do
  wait)."""
  if tf.distribute.has_strategy():
    return {}
  handles: Dict[Any, int] = {}
  for variable in variables:
    handle = getattr(_variables.storage(variable), "handle", None)
    if handle is None or not hasattr(handle, "ref"):
      return {}
    handles[handle.ref()] = id(variable)
  found: Dict[int, List[tf.Operation]] = {}
  for op in ops:
    takes = {handles[t.ref()] for t in op.inputs if t.ref() in handles}
    for key in takes:
      found.setdefault(key, []).append(op)
      if op.type == "Identity":
        handles[op.outputs[0].ref()] = key
      elif (any(out.dtype == tf.resource for out in op.outputs)
            or _calls_function(op)):
        return {}
  return found


def _calls_function(op: tf.Operation) -> bool:
  """Whether an attribute of `op` names a function it runs (`If`, `While`,
  `Case`, `PartitionedCall`)."""
  return any(value.HasField("func")
             or (value.HasField("list") and len(value.list.func) > 0)
             for value in op.node_def.attr.values())


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
  stored = _variables.storage(variable)
  with tf.init_scope(), tf.device(stored.device):
    return tf.compat.v1.Variable(
        lambda: tf.zeros(stored.shape, stored.dtype.base_dtype),
        trainable=False,
        collections=[],
        use_resource=not is_ref(stored),
        name=_variables.checkpoint_name(stored).replace(":", "_")
        + "_tfpartial_shadow")


def is_ref(variable: Variable) -> bool:
  """Whether `variable` is a TF1 ref variable (dtype `float32_ref`)."""
  dtype = _variables.storage(variable).dtype
  return bool(dtype != dtype.base_dtype)


def _dependencies(result: Any) -> List[Any]:
  if isinstance(result, (tf.Operation, tf.Tensor)):
    return [result]
  if isinstance(result, tf.Variable):
    return [result.op]
  return []
