"""`tfpartial scan` stays silent on a look-alike that part twenty-three's
negative codebases showed: a super-resolution model whose step trains
`self.forward.trainable_variables` after a layer of the project built
with an argument (`BicubicScale2D(rate)`) upscales the input. The layer
only calls `tf.image.resize`; it makes no weight whatever its arguments,
so every weight trains. The twins whose layer makes weights (a sized
layer, `add_weight` behind a flag its arguments may set, a sized library
base) are still found. The layer runs inside the step's tape (one run
before the tape opens gets no gradient, and is no part the step leaves
out: `_untaped`). Synthetic sources in the shape of real code."""

import pytest
import scanned

_UTILS = """\
    import tensorflow as tf

    class BicubicScale2D({base}):
      def __init__(self, rate, input_size=None, learn=False):
        super().__init__()
        self.rate = rate
        self.input_size = input_size
        self.learn = learn
        {made}

      def call(self, inputs):
        shape = tf.shape(inputs)
        h, w = shape[1], shape[2]
        return tf.image.resize(inputs, (int(h * self.rate), int(w * self.rate)),
                               method=tf.image.ResizeMethod.BICUBIC)
    """
_MODEL = """\
    import tensorflow as tf
    from utils import *

    class VDSR(tf.keras.models.Model):
      def __init__(self, scale_rate=4):
        super().__init__()
        self.upscaler = BicubicScale2D(scale_rate)
        self.forward = tf.keras.Sequential([
            tf.keras.layers.Conv2D(64, 3, padding='SAME') for _ in range(4)])

      @tf.function
      def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
          x = self.upscaler(x)
          pred = self.forward(x, training=True) + x
          loss = tf.reduce_mean(tf.square(y - pred))
        grads = tape.gradient(loss, self.forward.trainable_variables)
        self.optimizer.apply_gradients(
            zip(grads, self.forward.trainable_variables))
        return {'loss': loss}
    """
_FOUND = [("var-list-filter", "model.py", 18)]


@pytest.mark.parametrize("base, made, expected", [
    ("tf.keras.layers.Layer", "pass", []),
    # Its weights are left at their start.
    ("tf.keras.layers.Layer", "self.mix = tf.keras.layers.Dense(3)", _FOUND),
    # The argument may set the flag: made weights count.
    ("tf.keras.layers.Layer",
     "if learn:\n          self.k = self.add_weight('k', (3,))", _FOUND),
    # A library base with weights of its own.
    ("tf.keras.layers.Conv2D", "pass", _FOUND),
], ids=["weightless_layer", "sized_layer", "flagged_weight", "sized_base"])
def test_a_weightless_layer_built_with_arguments(base, made, expected):
  files = {"utils.py": _UTILS.format(base=base, made=made),
           "model.py": _MODEL}
  assert scanned.in_project(files) == expected
