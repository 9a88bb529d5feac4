"""`tfpartial scan`: a weight multiplied in the forward pass by a 0/1 mask
drawn at random once and never written (a fixed random connectivity:
lampinen/compositional-learning's `W1 * W1_mask` with `W1_mask =
tf.constant(numpy.random.binomial(...))`) is the sparsity of an
architecture, not a freeze: silent. The same product under a mask that
data or a pruning round chose (loaded from a file, or a drawn start the
code later writes) stays found."""

import pytest

import scanned

_TF1 = """\
    import numpy
    import tensorflow as tf
    x = tf.placeholder(tf.float32, shape=[9, 1])
    W1 = tf.Variable(tf.random_normal([100, 9], 0, 1))
    W1_mask = {mask}
    h = tf.nn.sigmoid(tf.matmul(W1 * W1_mask, x))
    train = tf.train.AdamOptimizer(0.01).minimize(tf.reduce_sum(h))
    """

_TF2 = """\
    import numpy as np
    import tensorflow as tf
    w = tf.Variable(tf.random.normal([784, 10]))
    w_mask = {mask}
    opt = tf.keras.optimizers.Adam()
    for x, y in data:
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.matmul(x, w * w_mask) - y) ** 2)
      opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
    """

_KERAS = """\
    import numpy as np
    import tensorflow as tf

    class SparseDense(tf.keras.layers.Layer):
      def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], 64))
        self.connect_mask = {mask}

      def call(self, inputs):
        return tf.matmul(inputs, self.kernel * self.connect_mask)

    model = tf.keras.Sequential([SparseDense()])
    model.compile("adam", "mse")
    model.fit(x, y)
    """

SILENT = {
    "tf1: a binomial draw made a constant": _TF1.format(
        mask="tf.constant(numpy.random.binomial(1, 0.34, [100, 9])"
        ".astype(numpy.float32))"),
    "tf1: a binomial draw as an array": _TF1.format(
        mask="numpy.random.binomial(1, 0.34, [100, 9])"
        ".astype(numpy.float32)"),
    "tf1: a uniform draw compared once": _TF1.format(
        mask="(numpy.random.rand(100, 9) < 0.3).astype(numpy.float32)"),
    "tf2: a choice made a constant": _TF2.format(
        mask="tf.constant(np.random.choice([0.0, 1.0], (784, 10)))"),
    "tf2: a binomial draw as an array": _TF2.format(
        mask="np.random.binomial(1, 0.5, (784, 10)).astype(np.float32)"),
    "keras: a draw kept on the layer": _KERAS.format(
        mask="tf.constant(np.random.binomial(1, 0.5, (input_shape[-1], "
        "64)), tf.float32)"),
    "keras: a draw through a local name": _KERAS.format(
        mask="tf.cast(keep, tf.float32)").replace(
            "        self.connect_mask",
            "        keep = np.random.choice([0, 1], (input_shape[-1], 64))"
            "\n        self.connect_mask"),
}

FOUND = {
    "tf1: a mask loaded from a file": (_TF1.format(
        mask="tf.constant(numpy.load('mask.npy'))"), 6),
    "tf1: a drawn start a pruning round writes": (_TF1.format(
        mask="tf.Variable(numpy.random.binomial(1, 0.5, [100, 9])"
        ".astype(numpy.float32), trainable=False)") + (
            "prune = W1_mask.assign(tf.cast(tf.abs(W1) > 0.1, tf.float32))\n"
        ), 6),
    "tf2: a mask loaded from a file": (_TF2.format(
        mask="np.load('mask.npy')"), 8),
    "keras: a mask variable of ones a pruning round writes": (_KERAS.format(
        mask="tf.Variable(tf.ones((input_shape[-1], 64)), "
        "trainable=False)") + (
            "layer = model.layers[0]\n"
            "layer.connect_mask.assign(tf.cast(tf.abs(layer.kernel) > 0.1, "
            "tf.float32))\nmodel.fit(x, y)\n"), 10),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_mask_drawn_once_is_connectivity_not_a_freeze(name):
  assert scanned.in_text(SILENT[name], "stop-gradient-mix") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_mask_data_or_pruning_chose_is_still_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "stop-gradient-mix") == [
      ("stop-gradient-mix", line)]
