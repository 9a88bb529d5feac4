"""Compact training: the optimizer sees only what trains.

For `train_only(variable, index, compact=True)`. What trains lives in a
small variable of its own, made by tfpartial: the rows that train, for an
index of whole rows (`RowLayout`), else the elements that train, in
row-major order, as a vector (`ElementLayout`). The optimizer trains it, so
its slots and its work cover only those: the split-variable reference,
done for the user. Each step copies them from the variable into it first
(so what the user assigns is what trains) and writes them back after; the
frozen elements are never touched, and nothing the size of the variable is
written.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import (Any, Dict, Iterable, Iterator, Optional, Tuple,
                    Union)

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _compat
from tfpartial._frozen import _tensors
from tfpartial._frozen import _tfprivate
from tfpartial._frozen import _variables
from tfpartial._frozen._selection import RowSet, Selection
from tfpartial._frozen._types import Gradient, Variable
from tfpartial._kernels import _native
from tfpartial._step import _distribute
from tfpartial._step import _restore

# layout key (a row set or an element selection) -> {graph or "eager": the
# compact variable}. Weak: the variable lives as long as the selection.
_Owners = Dict[Union[str, tf.Graph], Variable]
_COMPACT: "weakref.WeakKeyDictionary[object, _Owners]" = (
    weakref.WeakKeyDictionary())


class Layout:
  """Where the small variable's values sit in the variable."""

  # What the small variable belongs to; it is made once per key and graph.
  key: object
  # The small variable's shape.
  shape: Tuple[int, ...]

  def gather(self, variable: Variable) -> tf.Tensor:
    """The values of what trains, read from `variable` now."""
    raise NotImplementedError

  def write(self, storage: tf.Variable, values: tf.Tensor) -> Any:
    """The op writing `values` (the small variable's) into `storage`."""
    raise NotImplementedError

  def gradient(self, grad: tf.Tensor) -> Gradient:
    """The variable's gradient cut down to the small variable's."""
    raise NotImplementedError


class RowLayout(Layout):
  """The rows that train, in rising order: a variable of rows."""

  def __init__(self, row_set: RowSet):
    self.key = self.row_set = row_set
    self.shape = (row_set.rows.size,) + tuple(row_set.shape[1:])

  def gather(self, variable: Variable) -> tf.Tensor:
    return _restore.gather_rows(variable, _tensors.rows_tensor(self.row_set))

  def write(self, storage: tf.Variable, values: tf.Tensor) -> Any:
    return _restore.scatter(storage,
                            (_tensors.rows_tensor(self.row_set), values))

  def gradient(self, grad: tf.Tensor) -> Gradient:
    rows = _tensors.rows_tensor(self.row_set)
    if not isinstance(grad, tf.IndexedSlices):
      return tf.gather(grad, rows)
    indices = tf.cast(grad.indices, tf.int64)
    position = tf.minimum(tf.searchsorted(rows, indices), rows.shape[0] - 1)
    hit = tf.equal(tf.gather(rows, position), indices)
    return _slices(grad.values, position, hit, self.shape)


class ElementLayout(Layout):
  """The elements that train, in row-major order: a vector of them."""

  def __init__(self, selection: Selection):
    self.key = self.selection = selection
    self.full_shape = tuple(selection.shape)
    self.shape = (selection.size - selection.frozen_count,)

  def _offsets(self) -> tf.Tensor:
    return _tensors.trainable_offsets_tensor(self.selection)

  def gather(self, variable: Variable) -> tf.Tensor:
    return tf.gather(tf.reshape(_restore.read(variable), [-1]),
                     self._offsets())

  def write(self, storage: tf.Variable, values: tf.Tensor) -> Any:
    library = _native.library() if _scatters(storage) else None
    if library is not None:
      return library.tfpartial_resource_scatter_offsets(
          storage.handle, self._offsets(), values)
    return storage.scatter_nd_update(self._coordinates(), values)

  def _coordinates(self) -> tf.Tensor:
    """The trainable elements' coordinates, one row each, worked out from
    their offsets at each step rather than held beside them."""
    rest, axes = self._offsets(), []
    for size in reversed(self.full_shape[1:]):
      axes.append(rest % size)
      rest = rest // size
    axes.append(rest)
    return tf.stack(axes[::-1], axis=1)

  def gradient(self, grad: tf.Tensor) -> Gradient:
    offsets = self._offsets()
    if not isinstance(grad, tf.IndexedSlices):
      return tf.gather(tf.reshape(grad, [-1]), offsets)
    # Each element of the slices, by its flat offset in the variable, found
    # among the trainable offsets: work in proportion to the slices.
    row_size = int(np.prod(self.full_shape[1:], dtype=np.int64))
    flat = tf.reshape(
        tf.cast(grad.indices, tf.int32)[:, None] * row_size
        + tf.range(row_size, dtype=tf.int32)[None, :], [-1])
    values = tf.reshape(grad.values, [-1])
    position = tf.minimum(tf.searchsorted(offsets, flat), self.shape[0] - 1)
    hit = tf.equal(tf.gather(offsets, position), flat)
    return _slices(values, position, hit, self.shape)


def _slices(values: tf.Tensor, position: tf.Tensor, hit: tf.Tensor,
            shape: Tuple[int, ...]) -> tf.IndexedSlices:
  """The slices of a sparse gradient that fall on what trains (`hit`), as
  slices of the small variable at `position`: in their order, repeated
  ones kept, exactly the `tf.IndexedSlices` the split-variable reference's
  own gradient is. The optimizer then does with them what it does with
  the reference's: Keras' Adam sums the squares of repeated slices, v1
  Adam squares their sum, a lazy update writes only their rows. (Summing
  them here first, into a dense gradient, made Keras' Adam square the sum:
  0.08 off the reference after three steps.)

  Under XLA, where `boolean_mask` has a padded shape that later ops
  misread (an optimizer's `unique` counts the padding as a slice), every
  slice is kept, those off what trains as exact zeros at a position that
  trains: the same sums, and every optimizer XLA compiles a sparse update
  for adds them (a lazy one of `tf.compat.v1` has no XLA kernel).
  """
  dense_shape = tf.constant(shape, tf.int64)
  if _tfprivate.in_xla():
    kept = tf.reshape(hit, [-1] + [1] * (values.shape.rank - 1))
    return tf.IndexedSlices(
        _tensors.select(kept, values, tf.zeros_like(values)), position,
        dense_shape)
  return tf.IndexedSlices(tf.boolean_mask(values, hit),
                          tf.boolean_mask(position, hit), dense_shape)


def _scatters(storage: tf.Variable) -> bool:
  """Whether the compiled scatter may write `storage` (then it does, where
  the library is loaded): a float resource variable on a CPU of this
  process, in a step XLA does not compile. It writes in place, one store
  an element, where TensorFlow's scatter is several times slower and
  leaves every later read of the variable a copy (docs/performance.md,
  "Sparse fine-tuning"). A variable of another task (a parameter server's
  shard) is written by TensorFlow's scatter: that task may not have loaded
  the library."""
  device = tf.DeviceSpec.from_string(storage.device or "")
  return (not _restore.is_ref(storage)
          and storage.dtype.base_dtype in (tf.float32, tf.float64)
          and (device.device_type or "CPU").upper() == "CPU"
          and device.job in (None, "localhost")
          and not _tfprivate.in_xla())


def layout(selection: Selection) -> Layout:
  """The layout of a compact selection's small variable."""
  row_set = selection.row_set
  if not selection.compact or (row_set is not None and not row_set.trains):
    raise ValueError(f"compact training takes what trains; got "
                     f"{selection.describe()}")
  if row_set is not None:
    return RowLayout(row_set)
  return ElementLayout(selection)


def compact_variable(variable: Variable, selection: Selection) -> Variable:
  """The variable holding what trains of `variable`, made once per graph."""
  return _small(variable, layout(selection))


def _small(variable: Variable, layout_: Layout) -> Variable:
  in_replica = (tf.distribute.has_strategy()
                and not tf.distribute.in_cross_replica_context())
  owner = _owner()
  per_owner = _COMPACT.setdefault(layout_.key, {})
  if owner not in per_owner:
    if in_replica:
      raise _made_too_late(variable)
    with tf.init_scope():
      per_owner[owner] = _make_small(variable, layout_, owner == "eager")
  return per_owner[owner]


def _owner() -> Union[str, tf.Graph]:
  """What a small variable made now belongs to: "eager" (eager code and
  every `tf.function`), or the TF1 graph being built."""
  with tf.init_scope():
    return ("eager" if tf.executing_eagerly()
            else tf.compat.v1.get_default_graph())


def _made_too_late(variable: Variable) -> ValueError:
  """A small variable would be made inside `strategy.run`, where a strategy
  makes none (or one per replica)."""
  return ValueError(
      f"the small variable of `compact=True` for "
      f"{_variables.describe(variable)} would be made inside "
      "`strategy.run`, where a tf.distribute strategy makes no variable. "
      "It is made with the spec (`train_only(..., compact=True)`, "
      "`load_spec(..., variables)`), or where a wrapped optimizer is built "
      "in `strategy.scope()` (`optimizer.build(variables)`, `fit`): make "
      "the spec with the variables, or build the wrapped optimizer, before "
      "the first step.")


Pairs = Iterable[Tuple[Variable, Optional[Selection]]]


def _trained_compact(pairs: Pairs) -> Iterator[Tuple[Variable, Selection]]:
  """The pairs whose variable trains through a small variable."""
  for variable, selection in pairs:
    if (selection is not None and selection.compact
        and not selection.is_empty and not selection.is_everything):
      yield variable, selection


def make_ahead(pairs: Pairs) -> None:
  """Makes now, where the spec is made eagerly, the small variables of the
  (variable, selection) `pairs` that train compact: a step inside
  `strategy.run` could not make a strategy's (`_made_too_late`), and a
  checkpoint restored before the first step finds them (`made`). Beside
  each variable: under its strategy (a mirrored variable, then, for a
  mirrored one), or on its own device (a parameter server's shard). A TF1
  graph makes its own at its first step."""
  if _owner() != "eager":
    return
  for variable, selection in _trained_compact(pairs):
    _small(variable, layout(selection))


def made(pairs: Pairs) -> Dict[str, Variable]:
  """The small variables made so far for the (variable, selection) `pairs`,
  here (eagerly, or in this graph), by a name of each: `tfpartial_compact/`
  and the variable's checkpoint name. For a `tf.compat.v1` optimizer's
  `tf.train.Checkpoint`, which saves slots only of variables in its
  object graph."""
  owner = _owner()
  found: Dict[str, Variable] = {}
  for variable, selection in _trained_compact(pairs):
    small = _COMPACT.get(layout(selection).key, {}).get(owner)
    if small is not None:
      found["tfpartial_compact/"
            + _variables.checkpoint_name(variable)] = small
  return found


def _distributed(variable: Variable) -> bool:
  """Whether `variable` is a strategy's: mirrored, or on another task."""
  storage = _variables.storage(variable)
  if isinstance(storage, tf.distribute.DistributedValues):
    return True
  return tf.DeviceSpec.from_string(storage.device or "").job not in (
      None, "localhost")


@contextlib.contextmanager
def _placed(storage: tf.Variable) -> Iterator[None]:
  """Where a small variable is made: beside `storage`, by its strategy's
  rules: mirrored like a mirrored variable; for a parameter server's
  shard in its strategy's scope (whose optimizers colocate slots only
  with its own variables), colocated with the shard (the strategy would
  otherwise place it round-robin)."""
  if isinstance(storage, tf.distribute.DistributedValues):
    with storage.distribute_strategy.scope():
      yield
    return
  strategy = _tfprivate.strategy_of(storage) if _distributed(storage) else None
  if strategy is None:
    with tf.device(storage.device):
      yield
    return
  with strategy.scope(), strategy.extended.colocate_vars_with(storage):
    yield


def _make_small(variable: Variable, layout_: Layout, eager: bool) -> Variable:
  """The variable for what trains of `variable`.

  Eagerly it starts as those values of `variable` (an optimizer may copy
  it when it builds, as an EMA does, before the first step has synced
  it), and it has `variable`'s own name, where names may repeat (a Keras 3
  variable's path too), so that an optimizer's rules by name (weight decay
  exclusions, a map of optimizers by path) treat it as `variable`. In a
  TF1 graph, where names are unique, it is `<name>_tfpartial_compact` (its
  slots in a `Saver`'s file too), and the first step assigns it before
  anything reads it.
  """
  storage = _variables.storage(variable)
  name = _variables.checkpoint_name(variable)
  dtype = storage.dtype.base_dtype
  with _placed(storage):
    small: Variable
    if eager and _variables.is_keras(variable):
      small = _compat.keras_twin(name, layout_.shape, dtype)
      _variables.storage(small).assign(layout_.gather(variable))
      return small
    initial = (layout_.gather(variable) if eager
               else lambda: tf.zeros(layout_.shape, dtype))
    # In no collection: not the model's.
    small = tf.compat.v1.Variable(
        initial, trainable=False, collections=[], use_resource=True,
        name=name if eager else name.replace(":", "_") + "_tfpartial_compact")
    return small


def guard(variable: Variable, selection: Selection) -> "CompactGuard":
  """The guard of a compact step on `variable`, with its compact variable."""
  layout_ = layout(selection)
  return CompactGuard(variable, _small(variable, layout_), layout_)


class CompactGuard(_restore.Guard):
  """Copies what trains in before the update and out after it."""

  def __init__(self, variable: Variable, small: Variable, layout_: Layout):
    self.variable, self.small, self.layout = variable, small, layout_

  def before(self, graph: bool) -> Tuple[Optional[Any], None]:
    op = _variables.storage(self.small).assign(
        self.layout.gather(self.variable), read_value=False)
    return (op if graph else None), None

  def gradient(self, grad: Gradient) -> Gradient:
    """`grad` of the variable, cut down to what trains, in its order.

    A sparse gradient stays sparse, its repeated rows (or elements) kept as
    the optimizer would get them from the split-variable reference
    (`_slices`).
    """
    return None if grad is None else self.layout.gradient(grad)

  def after(self, token: None) -> Any:
    del token  # The layout says where the values go.
    # Per component of a mirrored variable: it has no scatter by offsets
    # (nor `scatter_nd_update`) of its own.
    return _distribute.update(self.variable, self.layout.write,
                              _restore.read(self.small), per_component=True)
