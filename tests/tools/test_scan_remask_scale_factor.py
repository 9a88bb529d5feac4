"""A Keras constraint that multiplies its weight by a `self.` attribute
set to arithmetic of numbers and a parameter named as a rate (`1 -
decay_rate`, part 23's L2WeightDecay) scales every element: silent. Set
from a mask (`1 - frozen_mask`), or from a rate-named parameter rebound
to loaded values, it still re-masks the weight. A parameter the
project's calls pass values is judged by those values, not its name: a
number named `keep_mask` scales, an array named `rate` masks."""

import pytest

import scanned

_found = scanned.found

_CONSTRAINT = '''
import numpy as np
import tensorflow as tf


class Shrink(tf.keras.constraints.Constraint):
  def __init__(self, {params}):
    super().__init__()
    {body}
    self.factor = {value}

  def __call__(self, w):
    return w * self.factor
'''


def _source(value, params="decay_rate", body="pass"):
  return _CONSTRAINT.format(value=value, params=params, body=body)


CASES = [
    pytest.param(_source("1 - decay_rate"), [], id="one_minus_rate"),
    pytest.param(_source("decay_rate"), [], id="rate_as_given"),
    pytest.param(_source("1.0 - 2 * decay_rate"), [], id="rate_arithmetic"),
    pytest.param(_source("-scale", params="scale"), [], id="negated_scale"),
    pytest.param(_source("1 - frozen_mask", params="frozen_mask"),
                 [("weight-remask", 13)], id="complement_of_mask"),
    pytest.param(_source("1 - frozen", params="frozen"),
                 [("weight-remask", 13)], id="complement_of_plain_name"),
    pytest.param(_source("1 - decay_rate",
                         body="decay_rate = np.load('keep.npy')"),
                 [("weight-remask", 12)], id="rate_name_rebound_to_array"),
    # A parameter the project passes values: judged by them, not its name.
    pytest.param(_source("keep_mask", params="keep_mask")
                 + "\nlayer = tf.keras.layers.Dense(\n"
                 "    3, kernel_constraint=Shrink(0.5))\n",
                 [], id="scalar_named_as_mask"),
    pytest.param(_source("1 - keep_mask", params="keep_mask")
                 + "\nlayer = tf.keras.layers.Dense(\n"
                 "    3, kernel_constraint=Shrink("
                 "keep_mask=1e-3))\n",
                 [], id="one_minus_scalar_named_as_mask"),
    pytest.param(_source("rate", params="rate")
                 + "\nlayer = tf.keras.layers.Dense(\n"
                 "    3, kernel_constraint=Shrink("
                 "np.load('keep.npy')))\n",
                 [("weight-remask", 12)], id="array_named_as_rate"),
    pytest.param(_source("1 - decay_rate", params="decay_rate=0.01")
                 + "\nlayer = tf.keras.layers.Dense(\n"
                 "    3, kernel_constraint=Shrink("
                 "decay_rate=np.load('keep.npy')))\n",
                 [("weight-remask", 12)], id="rate_default_passed_array"),
    pytest.param(_source("1 - decay_rate", params="decay_rate=0.01")
                 + "\nlayer = tf.keras.layers.Dense(\n"
                 "    3, kernel_constraint=Shrink())\n",
                 [], id="rate_default_only"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_remask_scale_factor(source, expected):
  assert _found(source) == expected
