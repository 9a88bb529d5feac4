"""`tfpartial scan`'s forward-pass mask (`stop-gradient-mix`) kept in a
non-trainable weight whose array the layer first builds under the same
attribute (part 36f's katejarne `CustomDense`: `self.mask = np.zeros(
(input_shape[-1], units))`, the kept positions set to one, then `self.
mask = self.add_weight("mask", ..., initializer=Constant(self.mask),
trainable=False)`; `call` multiplies `self.kernel * self.mask`): the
masked elements of the kernel get a zero gradient and never train. The
layer's `input_shape` and its positions, parameters read in making the
array, make it no mask of the batch. The look-alikes stay silent: a mask
handed to `call` with the batch, a mask variable written from the batch
in `call`, a trainable gate, the layer with a random mask drawn anew.
Each source is synthetic."""

import pytest

import scanned

_LAYER = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Layer


class CustomDense(Layer):

    def __init__(self, units, trainable_indices=None, **kwargs):
        self.units = units
        self.trainable_indices = trainable_indices
        super(CustomDense, self).__init__(**kwargs)

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units),
                                      initializer='zeros', trainable=True)
{mask}

    def call(self, inputs{extra}):
{body}
        return tf.matmul(inputs, masked_kernel)


model = tf.keras.Sequential([CustomDense(1, trainable_indices=rows)])
model.compile(loss='mse', optimizer='adam')
model.fit(x, y)
"""

_HELD = """\
        self.mask = np.zeros((input_shape[-1], self.units), dtype=np.float32)
        if self.trainable_indices is not None:
            self.mask[self.trainable_indices] = 1.0
        self.mask = self.add_weight("mask", (input_shape[-1], self.units),
                                    initializer=tf.initializers.Constant(self.mask),
                                    trainable={trainable})"""


def _layer(mask=_HELD.format(trainable="False"), extra="",
           body="        masked_kernel = self.kernel * self.mask"):
  return _LAYER.format(mask=mask, extra=extra, body=body)


def test_a_mask_kept_in_a_non_trainable_weight_is_found():
  assert scanned.found(_layer()) == [("stop-gradient-mix", 24)]


def test_the_layer_defined_but_never_made_is_found_too():
  # katejarne's script builds its model with Dense: the corpus keeps the
  # layer as a doubtful instance, found where the product is.
  code = _layer().replace("CustomDense(1, trainable_indices=rows)",
                          "tf.keras.layers.Dense(1)")
  assert scanned.found(code) == [("stop-gradient-mix", 24)]


SILENT = {
    "a mask handed to call with the batch": _layer(
        mask="", extra=", mask",
        body="        masked_kernel = self.kernel * mask"),
    "a mask weight written from the batch in call": _layer(
        extra=", mask", body="        self.mask.assign(mask)\n"
        "        masked_kernel = self.kernel * self.mask"),
    "a trainable gate": _layer(mask=_HELD.format(trainable="True")),
    # Positions the layer works out from its own shapes, under a name
    # that does not say so: structural, no parameter handed in.
    "kept positions computed from the layer's shapes": _layer(
        mask=_HELD.format(trainable="False").replace(
            "        if self.trainable_indices is not None:\n"
            "            self.mask[self.trainable_indices] = 1.0",
            "        self.half = input_shape[-1] // 2\n"
            "        self.mask[self.half] = 1.0")),
    "a mask drawn anew in call": _layer(
        mask="", body="        drop = tf.cast(tf.random.uniform("
        "tf.shape(self.kernel)) < 0.5, tf.float32)\n"
        "        masked_kernel = self.kernel * drop"),
}


@pytest.mark.parametrize("code", SILENT.values(), ids=list(SILENT))
def test_a_look_alike_is_silent(code):
  assert scanned.found(code) == []
