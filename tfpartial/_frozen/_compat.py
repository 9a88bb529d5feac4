"""Which Keras this is: the one place tfpartial asks for a version.

TensorFlow up to 2.15 ships Keras 2 as `keras` (and `tf.keras`); from 2.16
`keras` is Keras 3, and Keras 2 lives on as the `tf_keras` package. Keras 3
has variables of its own and optimizers of another design; Keras 2 trains
plain `tf.Variable`s.
"""

from __future__ import annotations

import contextlib
import sys
from types import ModuleType
from typing import Any, List, Tuple

import keras

KERAS_3 = int(keras.__version__.split(".")[0]) >= 3


def keras_variable_types() -> Tuple[type, ...]:
  """Keras 3's variable class, or nothing under Keras 2."""
  return (keras.Variable,) if KERAS_3 else ()


def keras2_modules() -> List[ModuleType]:
  """The loaded Keras 2 packages: `tf_keras`, and `keras` when it is 2.x.

  `tf_keras` counts only once imported: tfpartial never imports it.
  """
  modules: List[ModuleType] = [] if KERAS_3 else [keras]
  if sys.modules.get("tf_keras") is not None:
    modules.append(sys.modules["tf_keras"])
  return modules


def keras_twin(path: str, shape: Tuple[int, ...], dtype: Any) -> Any:
  """A new non-trainable Keras 3 variable of zeros with the path `path`
  (and so the name after its last `/`), whatever name scope is open."""
  parent, _, name = path.rpartition("/")
  outer, _, last = parent.rpartition("/")
  scope = (keras.name_scope(last, override_parent=outer) if last
           else contextlib.nullcontext())
  with scope:
    return keras.Variable(initializer="zeros", shape=shape, dtype=dtype,
                          trainable=False, name=name)
