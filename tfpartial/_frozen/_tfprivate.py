"""The one place tfpartial uses private TensorFlow modules, and why.

No public API tells whether the function being traced now will be compiled
by XLA. tfpartial needs to know: XLA cannot compile the compiled kernel's
custom ops, nor the mutex ops that serialize steps across threads.

No public API names a TF1 `PartitionedVariable`'s class, nor where each of
its parts sits in the table (see below).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

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
