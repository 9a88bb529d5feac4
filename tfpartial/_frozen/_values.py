"""A variable's value as NumPy, for what a criterion computes from it.

Read where the spec binds, which may be inside a `tf.function` (a late
spec at its first step, in Keras' train function): the value is read
outside it (`tf.init_scope`). In a TF1 graph a variable has a value only in
a session: the default session's, or a clear error saying so. A sharded
table's value is assembled from its parts, in the checkpoint's rows.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from tfpartial._frozen import _tables
from tfpartial._frozen import _variables
from tfpartial._frozen._types import Variable


def read(variable: Variable) -> np.ndarray:
  """The value of `variable` (a table: of its full shape), as NumPy.

  Raises:
    ValueError: in a TF1 graph with no default session, or a variable
      the session has no value for yet.
  """
  with tf.init_scope():
    if _variables.is_table(variable):
      return _table(variable)
    if tf.executing_eagerly():
      return np.asarray(variable.numpy())
    return _in_session(variable)


def _table(table: Variable) -> np.ndarray:
  parts = _tables.parts(table)
  first = read(parts[0].variable)
  value = np.empty(_variables.static_shape(table), dtype=first.dtype)
  for part in parts:
    block = tuple(slice(o, o + n) for o, n in zip(part.offset, part.shape))
    value[block] = read(part.variable)
  return value


def _in_session(variable: Variable) -> np.ndarray:
  session = tf.compat.v1.get_default_session()
  described = _variables.describe(variable)
  if session is None:
    raise ValueError(
        f"a criterion reads the value of {described}, and in a TF1 graph a "
        "variable has a value only in a session: make the spec inside "
        "`with session.as_default():` once the variables hold the values "
        "to select from (initialized or restored).")
  try:
    return np.asarray(session.run(_variables.storage(variable)))
  except tf.errors.FailedPreconditionError:
    raise ValueError(
        f"a criterion reads the value of {described}, which the default "
        "session has not initialized or restored yet.") from None
