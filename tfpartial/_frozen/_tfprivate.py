"""The one place tfpartial uses private TensorFlow modules, and why.

No public API tells whether the function being traced now will be compiled
by XLA. tfpartial needs to know: XLA cannot compile the compiled kernel's
custom ops, nor the mutex ops that serialize steps across threads.

No public API names a TF1 `PartitionedVariable`'s class, nor where each of
its parts sits in the table (see below).

No public API says where Keras 3 saves a variable, nor reads which object
of a checkpoint's object graph holds which value (`to_json` records the
one and `verify` reads the other; see the end).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import tensorflow as tf
from tensorflow.python.ops import control_flow_util  # pylint: disable=g-direct-tensorflow-import
from tensorflow.python.ops import variables as tf_vars  # pylint: disable=g-direct-tensorflow-import


def in_xla() -> bool:
  """Whether the graph being built now will be compiled by XLA."""
  return bool(control_flow_util.GraphOrParentsInXlaContext(
      tf.compat.v1.get_default_graph()))


# TF1 partitioned variables. `tf.compat.v1.get_variable(...,
# partitioner=...)` returns a `PartitionedVariable`, which no public module
# exports (so there is no public class to test against or to build one
# from parts with), and where each part sits in the table is known only to
# its save-slice info, which the Saver reads through the same private
# method.

PARTITIONED_VARIABLE: type = tf_vars.PartitionedVariable


def part_variables(table: object) -> List[Any]:
  """The parts of a `PartitionedVariable`, in the order of its offsets."""
  parts: List[Any] = list(table)  # type: ignore[call-overload]
  return parts


def slice_info(part: object) -> Optional[Tuple[str, Tuple[int, ...],
                                               Tuple[int, ...]]]:
  """(full name, full shape, offset) of a TF1 part variable, or None for a
  variable that is not part of a partitioned one."""
  getter = getattr(part, "_get_save_slice_info", None)
  info = None if getter is None else getter()
  if info is None:
    return None
  return (str(info.full_name), tuple(int(d) for d in info.full_shape),
          tuple(int(o) for o in info.var_offset))


def partitioned_variable(name: str, shape: Tuple[int, ...], dtype: Any,
                         parts: Sequence[Any],
                         partitions: Sequence[int]) -> Any:
  """A `PartitionedVariable` of `parts` (for a spec bound by name to the
  parts a step trains, which the graph holds without the table object)."""
  return tf_vars.PartitionedVariable(
      name=name, shape=list(shape), dtype=dtype, variable_list=list(parts),
      partitions=list(partitions))


def sharded_variable_type() -> Optional[type]:
  """TF2's `ShardedVariable` class (ParameterServerStrategy's sharded
  tables), which only `tf.__internal__` exports; None where it is not."""
  internal = getattr(getattr(tf, "__internal__", None), "distribute", None)
  found: Optional[type] = getattr(internal, "ShardedVariable", None)
  return found


def sharded_container(shard: object) -> Optional[Any]:
  """The `ShardedVariable` `shard` is a shard of, or None: how a spec
  loaded without variables finds, among the shards a step trains, the
  table it names (each shard keeps a weak reference to its container, and
  no public API gives it)."""
  reference = getattr(shard, "_sharded_container", None)
  return None if reference is None else reference()


def strategy_of(variable: object) -> Optional[tf.distribute.Strategy]:
  """The strategy whose scope made `variable`, or None: how a compact
  spec finds the ParameterServerStrategy of a table's shard, to make its
  small variable in that strategy's scope beside the shard (Keras'
  optimizers colocate their slots with a variable only if the strategy
  made it). A mirrored variable says it publicly (`distribute_strategy`);
  a parameter server's shard keeps it only in this attribute, which
  TensorFlow's own `colocate_vars_with` reads."""
  strategy: Optional[tf.distribute.Strategy] = getattr(
      variable, "_distribute_strategy", None)
  return strategy


# Keras 3's saving, for `_saved`. A `.weights.h5` file holds a variable at
# the key of the object tree Keras walks when saving (`saving_lib.
# _save_state`, which `save_weights` and `save` call): asking that walk,
# with a store that writes nothing, gives the keys exactly as this Keras
# writes them. Which layers hold which layers and variables is known only
# to the layers' trackers (`_flatten_layers`, `_trainable_variables`).


def keras_layer_parts(layer: Any) -> Tuple[List[Any], List[Any]]:
  """A live Keras 3 layer's own layers and own variables; ([], []) for an
  object that is not a working layer (half-made, or being torn down)."""
  try:
    layers = list(layer._flatten_layers(include_self=False, recursive=False))
    own = list(layer._trainable_variables) + list(
        layer._non_trainable_variables)
  except Exception:  # pylint: disable=broad-except
    return [], []  # Anything found by the garbage collector may be broken.
  return layers, own


def keras_saved_keys(model: Any, wanted: Iterable[int]) -> Dict[int, str]:
  """id(variable) -> its key in `model.save_weights(...)`'s file
  (`layers/dense/vars/0`), for the variables whose ids are `wanted` that
  Keras saves as themselves (a LoRA kernel is saved merged, so not)."""
  from keras.src.saving import saving_lib  # pylint: disable=g-import-not-at-top
  wanted = set(wanted)
  found: Dict[int, str] = {}

  class Store(dict):  # type: ignore[type-arg]
    """One object's `vars`: records, never writes."""

    def __init__(self, path: str):
      super().__init__()
      self.path = path

    def __setitem__(self, key: str, value: Any) -> None:
      if id(value) in wanted:
        found.setdefault(id(value), f"{self.path}/vars/{key}".lstrip("/"))

  class Recorder(saving_lib.H5IOStore):  # type: ignore[misc]
    """Where `_save_state` would write; it checks that it is given a store
    of Keras' own classes."""

    def __init__(self) -> None:  # pylint: disable=super-init-not-called
      pass

    def __bool__(self) -> bool:
      return True

    def make(self, path: str, metadata: Any = None) -> Store:
      del metadata
      return Store(path)

  try:
    saving_lib._save_state(model, Recorder(), None, "", set())
  except Exception:  # pylint: disable=broad-except
    return {}  # Another Keras: no keys rather than wrong ones.
  return found


def object_graph(serialized: bytes) -> Any:
  """A checkpoint's `_CHECKPOINTABLE_OBJECT_GRAPH` value, parsed (its
  nodes, each with its children by name and the checkpoint keys of its
  values), or ValueError if it does not parse."""
  from tensorflow.core.protobuf import trackable_object_graph_pb2  # pylint: disable=g-import-not-at-top,g-direct-tensorflow-import
  graph = trackable_object_graph_pb2.TrackableObjectGraph()
  try:
    graph.ParseFromString(serialized)
  except Exception as error:  # pylint: disable=broad-except
    raise ValueError(f"its object graph does not parse ({error})") from None
  return graph
