"""`tfpartial scan`: a Keras constraint that multiplies its weight by a
mask the architecture alone fixes (DINAE's `Constraint_Zero`, a kernel of
ones with its central taps zeroed; a MADE's mask compared from degrees; a
triangle) keeps no parameter from training: silent, as the same mask in
the forward pass is (BUILDING.md, "Structural masks"). A constraint whose
mask zeroes rows spelled as numbers (a padding row) or comes from a file
stays found."""

import pytest

import scanned

_FIT = """
model.compile("adam", "mse")
model.fit(x, y)
"""

_CENTRE = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras.constraints import Constraint

class CentreZero(Constraint):
  def __init__(self, position, kernel_shape, dw):
    mask = np.ones(kernel_shape)
    {zero}
    self.mask = tf.constant(mask, tf.float32)

  def __call__(self, w):
    return w * self.mask

model = tf.keras.Sequential([tf.keras.layers.Conv2D(
    8, (11, 11), kernel_constraint=CentreZero((5, 5), (11, 11, 1, 8), 0))])
""" + _FIT

_MADE = """\
import numpy as np
import tensorflow as tf

def get_mask(n_in, n_out):
  d_in = np.arange(n_in) % 4 + 1
  d_out = np.arange(n_out) % 4 + 1
  return (d_out[..., None] >= d_in).astype("float32")

def masked_dense(inputs, units):
  mask = get_mask(int(inputs.shape[-1]), units).T
  layer = tf.layers.Dense(units, kernel_constraint=lambda x: mask * x)
  return layer.apply(inputs)

x = tf.placeholder(tf.float32, [None, 8])
h = masked_dense(x, 8)
train = tf.train.AdamOptimizer().minimize(tf.reduce_sum(h))
"""

_LAMBDA = """\
import numpy as np
import tensorflow as tf
{make}
model = tf.keras.Sequential([tf.keras.layers.Embedding(
    50000, 128, embeddings_constraint=lambda w: w * row_mask)])
""" + _FIT

SILENT = {
    "a class zeroing the kernel's centre taps": _CENTRE.format(
        zero="mask[position[0] - dw:position[0] + dw + 1, "
        "position[1] - dw:position[1] + dw + 1, :, :] = 0.0"),
    "a MADE's lambda with a mask from degrees": _MADE,
    "a lambda under a triangle": _LAMBDA.format(
        make="row_mask = np.triu(np.ones((50000, 128)))"),
}

FOUND = {
    "a class zeroing row 0 (a padding row)": (_CENTRE.format(
        zero="mask[0] = 0.0"), 12),
    "a lambda zeroing rows by number": (_LAMBDA.format(
        make="row_mask = np.ones((50000, 1), np.float32)\n"
        "row_mask[:100] = 0.0"), 6),
    "a lambda under a mask from a file": (_LAMBDA.format(
        make="row_mask = np.load('rows.npy')"), 5),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_constraint_of_the_architecture_s_shape_is_silent(name):
  assert scanned.found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_constraint_of_picked_or_loaded_rows_is_found(name):
  code, line = FOUND[name]
  assert scanned.found(code) == [("weight-remask", line)]
