"""tfpartial's types as a user's typed code sees them.

mypy checks this file strictly, with the package (`mypy.ini`, tox's
py311-mypy env): the calls below must type-check as written, and each line
marked `# type: ignore[CODE]` must be an error of that code, since mypy
reports an ignore it does not need. Here the same code runs: what mypy
accepts works, and what it refuses fails.
"""

from __future__ import annotations

import configparser
import pathlib
from typing import List

import numpy as np
import pytest
import tensorflow as tf

import tfpartial


def _bits(value: np.ndarray) -> np.ndarray:
  return np.ascontiguousarray(value, dtype=np.float32).view(np.uint32)


def test_what_mypy_accepts_runs() -> None:
  x = tf.Variable([1.0, 2.0, 3.0], name="x")
  w = tf.Variable(tf.ones([4, 2]), name="w")
  spec: tfpartial.FreezeSpec = (tfpartial.freeze(x, np.s_[:1])
                                | tfpartial.train_only(w, [0, 2]))
  mask: np.ndarray = spec.frozen_mask(x)
  assert mask.tolist() == [True, False, False]
  grads = spec.mask([tf.ones([3]), tf.ones([4, 2])], [x, w])
  assert [g.numpy().sum() for g in grads if g is not None] == [2.0, 4.0]
  # `wrap` returns the optimizer's own type, so its own methods type-check.
  optimizer = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.5))
  optimizer.minimize(lambda: tf.reduce_sum(x * x) + tf.reduce_sum(w * w),
                     var_list=[x, w])
  after = x.numpy()
  assert np.array_equal(_bits(after[:1]), _bits(np.array([1.0])))
  assert not np.array_equal(_bits(after[1:]), _bits(np.array([2.0, 3.0])))
  named: List[tf.Variable] = [x, w]
  assert tfpartial.load_spec(spec.to_json(), named) == spec
  assert tfpartial.load_spec(spec.to_json(), {"x": x, "w": w}) == spec
  assert tfpartial.spec_of(optimizer) == spec


def test_what_mypy_refuses_fails() -> None:
  x = tf.Variable([1.0, 2.0], name="x")
  spec = tfpartial.freeze(x, 0)
  with pytest.raises(TypeError, match="`variable` must be a tf.Variable"):
    tfpartial.freeze("x", 0)  # type: ignore[arg-type]  # Not a variable.
  with pytest.raises(TypeError, match="`variable` must be a tf.Variable"):
    spec.frozen_mask(np.zeros(2))  # type: ignore[arg-type]  # Nor an array.
  with pytest.raises(TypeError, match="`optimizer` must be an optimizer"):
    spec.wrap("sgd")  # type: ignore[type-var]  # A name is no optimizer.
  with pytest.raises(TypeError, match="`text_or_path` must be JSON text"):
    tfpartial.load_spec(3, [x])  # type: ignore[arg-type]  # Nor a number.


def test_mypy_checks_every_module_of_the_package() -> None:
  # A section that turns a module's errors off would let it drift from the
  # types the rest of the package relies on; mypy.ini must have none.
  config = configparser.ConfigParser()
  ini = pathlib.Path(__file__).resolve().parent.parent.parent / "mypy.ini"
  assert config.read(ini), f"no {ini}"
  assert config.getboolean("mypy", "strict")
  off = [section for section in config.sections()
         if config.has_option(section, "ignore_errors")]
  assert not off, f"mypy.ini turns errors off in {off}"
  own = [section for section in config.sections()
         if section != "mypy" and "tfpartial" in section]
  assert not own, f"mypy.ini has settings of its own for {own}"
