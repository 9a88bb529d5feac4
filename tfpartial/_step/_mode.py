"""Where a step runs, decided here and only here, once per call.

Every entry point into a step is marked for autograph not to convert it
(`not_converted`): a step holds no Python control flow on tensors, and
converting it (and all it calls) cost a user's first `tf.function` step
most of its trace. The spec's methods (`_api/_spec.py`) and the wrapped
optimizers' methods a user calls (`_families/_v1.py`, `_keras.py`,
`_tf_keras.py`) are marked, each where autograph would otherwise convert
it, and so are the step's own entry points.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar, Union, cast

import tensorflow as tf

from tfpartial._step import _restore

_F = TypeVar("_F", bound=Callable[..., Any])

Path = Union[_restore.EagerPath, _restore.GraphPath]

_EAGER = _restore.EagerPath()
_GRAPH = _restore.GraphPath()


def not_converted(function: _F) -> _F:
  """`function`, marked for autograph to leave as written
  (`tf.autograph.experimental.do_not_convert`), keeping its type."""
  return cast(_F, tf.autograph.experimental.do_not_convert(function))


def current_path() -> Path:
  """The eager path in TF2 code (also inside `tf.function`), else the graph.

  Under `tf.init_scope()`, `tf.function` code reports the eager context it
  was called from, while a TF1 graph reports graph mode.
  """
  with tf.init_scope():
    return _EAGER if tf.executing_eagerly() else _GRAPH
