"""Writes that stay exact under `tf.distribute`.

In replica context, assigning to a mirrored variable whose aggregation is
MEAN or SUM all-reduces the value first: every replica would write back the
mean of the same frozen values, which is not always those values to the bit
(three copies of x, summed and divided by three). A restore there goes
through `merge_call` and `strategy.extended.update`, which hands each
component its own replica's value, unreduced. Variables with aggregation
NONE (the default) and non-distributed variables are written directly,
but for a write a mirrored variable has no method for (a compact step's
scatter by offsets): it goes to each component in every context.
"""

from __future__ import annotations

from typing import Any, Callable

import tensorflow as tf

from tfpartial._frozen import _variables
from tfpartial._frozen._types import Variable

# (storage variable, value) -> op; run on each component of a mirrored one.
Update = Callable[[tf.Variable, Any], Any]


def update(variable: Variable, write: Update, value: Any,
           per_component: bool = False) -> Any:
  """`write(storage, value)`, exact per replica under a strategy.

  `per_component`: `write` takes only a plain variable (it scatters by
  offsets, which a mirrored variable has no method for), so a mirrored
  one is written component by component in every context, each component
  with its own replica's value.
  """
  storage = _variables.storage(variable)
  if per_component and isinstance(storage, tf.distribute.DistributedValues):
    if not tf.distribute.has_strategy():  # Outside the strategy's scope.
      with storage.distribute_strategy.scope():
        return update(variable, write, value, per_component)
    if tf.distribute.in_cross_replica_context():
      return tf.distribute.get_strategy().extended.update(
          storage, write, args=(value,), group=True)
    return _merged(storage, write, value)
  if _needs_merge(storage):
    return _merged(storage, write, value)
  return write(storage, value)


def _merged(storage: tf.Variable, write: Update, value: Any) -> Any:
  """`write` of each replica's own `value`, through `merge_call`."""
  def merge(strategy: tf.distribute.Strategy, target: tf.Variable,
            per_replica: Any) -> Any:
    return strategy.extended.update(target, write, args=(per_replica,),
                                    group=True)

  return tf.distribute.get_replica_context().merge_call(
      merge, args=(storage, value))


def _needs_merge(storage: tf.Variable) -> bool:
  if not isinstance(storage, tf.distribute.DistributedValues):
    return False
  if (not tf.distribute.has_strategy()
      or tf.distribute.in_cross_replica_context()):
    return False
  return storage.aggregation not in (tf.VariableAggregation.NONE,
                                     tf.VariableAggregation.ONLY_FIRST_REPLICA)
