"""`tfpartial scan`: a layer whose kernel initializer and kernel
constraint multiply by the same mask (an autoregressive flow's masked
dense layer, ssnt-tts' `MaskedDense`: `masked_kernel_initializer` returns
`mask * init(shape)`, `masked_kernel_constraint` returns `mask * x`) has
its masked elements at zero from the start: a connectivity the layer is
built with, no trained value kept. Silent. A constraint alone (the
initializer unmasked, weights that train before the mask zeroes them),
or an initializer masked by another mask, stays found."""

import pytest

import scanned

_LAYER = """\
import numpy as np
import tensorflow as tf

class BlockMask:
  def __init__(self, n_in, n_out):
    self.n_in, self.n_out = n_in, n_out

  def gen_mask(self):
    mask = np.zeros([self.n_in, self.n_out], np.float32)
    for i in range(self.n_in):
      mask[i, i:] = 1
    return mask

class MaskedDense(tf.layers.Layer):
  def __init__(self, units, depth, other, init=tf.initializers.glorot_normal()):
    super(MaskedDense, self).__init__()
    mask = BlockMask(depth, units).gen_mask()

    def masked_kernel_initializer(shape, dtype=None, partition_info=None):
      return {init} * init(shape, dtype, partition_info)

    def masked_kernel_constraint(x):
      return mask * x

    self._dense = tf.layers.Dense(units, kernel_initializer={given},
                                  kernel_constraint=masked_kernel_constraint)

  def call(self, inputs):
    return self._dense(inputs)

x = tf.placeholder(tf.float32, [None, 8])
h = MaskedDense(8, 8, np.load("other.npy"))(x)
train = tf.train.AdamOptimizer().minimize(tf.reduce_sum(h))
"""

_LAMBDAS = """\
import numpy as np
import tensorflow as tf

mask = np.load("connections.npy")
layer = tf.keras.layers.Dense(
    64, kernel_initializer={init},
    kernel_constraint=lambda w: w * mask)
model = tf.keras.Sequential([layer])
model.compile("adam", "mse")
model.fit(x, y)
"""

SILENT = {
    "initializer and constraint under one mask":
        _LAYER.format(init="mask", given="masked_kernel_initializer"),
    "lambdas under one mask": _LAMBDAS.format(
        init="lambda shape, dtype=None: mask * tf.random.normal(shape)"),
}

FOUND = {
    "a constraint alone": (_LAYER.format(
        init="mask", given="init"), 23),
    "an initializer under another mask": (_LAYER.format(
        init="other", given="masked_kernel_initializer"), 23),
    "lambdas, the initializer unmasked": (_LAMBDAS.format(
        init="'glorot_uniform'"), 7),
    "lambdas, the initializer under another mask": (_LAMBDAS.format(
        init="lambda shape, dtype=None: keep * tf.random.normal(shape)"), 7),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_mask_the_layer_starts_with_is_silent(name):
  assert scanned.found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_mask_on_weights_that_trained_unmasked_is_found(name):
  code, line = FOUND[name]
  assert scanned.found(code) == [("weight-remask", line)]
