"""A kernel times a fixed mask read by TensorFlow's generated ops
(`gen_math_ops.mat_mul`, `batch_mat_mul_v2`) is read as a weight as by
`tf.matmul` (part 24's justincosentino `MaskedDense`:
`mat_mul(inputs, tf.multiply(self.kernel, self.mask))` with a
non-trainable mask weight): found. The same ops reading a mask on the
inputs, a trainable gate or a mask drawn each call are silent."""

import pytest

import scanned

_LAYER = '''
import numpy as np
import tensorflow as tf
from tensorflow.python.ops import gen_math_ops


class MaskedDense(tf.keras.layers.Dense):
  def __init__(self, units, mask_initializer="ones", **kwargs):
    super().__init__(units, **kwargs)
    self.mask_initializer = mask_initializer

  def build(self, input_shape):
    super().build(input_shape)
    if isinstance(self.mask_initializer, np.ndarray):
      self.mask_initializer = tf.constant_initializer(self.mask_initializer)
    self.mask = self.add_weight("mask", shape=[input_shape[-1], self.units],
                                initializer=self.mask_initializer,
                                trainable=False)
    self.gate = self.add_weight("gate", shape=[input_shape[-1], self.units],
                                trainable=True)

  def call(self, inputs):
    {line}
    return outputs


def build(masks):
  return tf.keras.Sequential([MaskedDense(300, mask_initializer=masks["h"]),
                              MaskedDense(10, mask_initializer=masks["o"])])
'''


def _layer(line):
  return _LAYER.replace("{line}", line)


CASES = [
    pytest.param(_layer("outputs = gen_math_ops.mat_mul(inputs, "
                        "tf.multiply(self.kernel, self.mask))"),
                 [("stop-gradient-mix", 23)], id="gen_math_ops_mat_mul"),
    pytest.param(_layer("outputs = gen_math_ops.batch_mat_mul_v2(inputs, "
                        "self.kernel * self.mask)"),
                 [("stop-gradient-mix", 23)], id="batch_mat_mul_v2"),
    # Silent: the mask on the inputs (an activation), a trainable gate, a
    # mask drawn each call (DropConnect).
    pytest.param(_layer("outputs = gen_math_ops.mat_mul(inputs * "
                        "self.mask[:, 0], self.kernel)"), [],
                 id="mask_on_inputs"),
    pytest.param(_layer("outputs = gen_math_ops.mat_mul(inputs, "
                        "self.kernel * self.gate)"), [], id="trainable_gate"),
    pytest.param(_layer("drop_mask = tf.cast(tf.random.uniform(tf.shape("
                        "self.kernel)) > 0.5, tf.float32)\n"
                        "    outputs = gen_math_ops.mat_mul(inputs, "
                        "self.kernel * drop_mask)"), [],
                 id="drawn_each_call"),
]


@pytest.mark.parametrize("code, expected", CASES)
def test_raw_op_readers(code, expected):
  assert scanned.in_text(code, "stop-gradient-mix") == expected
