"""The one place tfpartial uses a private TensorFlow module, and why.

No public API tells whether the function being traced now will be compiled
by XLA. tfpartial needs to know: XLA cannot compile the compiled kernel's
custom ops, nor the mutex ops that serialize steps across threads.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import control_flow_util  # pylint: disable=g-direct-tensorflow-import


def in_xla() -> bool:
  """Whether the graph being built now will be compiled by XLA."""
  return bool(control_flow_util.GraphOrParentsInXlaContext(
      tf.compat.v1.get_default_graph()))
