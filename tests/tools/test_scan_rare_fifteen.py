"""`tfpartial scan` on the rarer forms of part fifteen: a Keras layer's
own weight read back by position (`self.trainable_variables[0]`) whose
first rows a `tf.pad` replaces by constants (`stop-gradient-mix`), and an
optimizer given an element-wise learning rate that a mask multiplies
(`grads-mask`: a learning-rate mask is a gradient mask). The look-alikes
stay silent."""

import pytest

import scanned

_found = scanned.found

# A library of layers: no step here, its users train it.
_LAYER = """\
    import tensorflow as tf
    class Embedding(tf.keras.layers.Layer):
      def build(self, shape):
        self.add_weight(name='w', shape=[100, 8]{trainable})
      def table(self):
        return tf.pad(self.{weights}[0]{rows}, [[1, 0], [0, 0]])
      def call(self, ids):
        return tf.gather(self.table(), ids)
    """


@pytest.mark.parametrize("trainable, weights, rows, expected", [
    ("", "trainable_variables", "[1:]", [("stop-gradient-mix", 6)]),
    ("", "trainable_weights", "[1:]", [("stop-gradient-mix", 6)]),
    ("", "weights", "[1:]", [("stop-gradient-mix", 6)]),
    # The look-alikes: the whole weight padded (a row appended), a weight
    # made not to train.
    ("", "trainable_variables", "", []),
    (", trainable=False", "weights", "[1:]", []),
])
def test_a_layer_weight_read_by_position_padded(trainable, weights, rows,
                                                expected):
  assert _found(_LAYER.format(trainable=trainable, weights=weights,
                              rows=rows)) == expected


def test_a_variable_padded_where_nothing_trains_stays_silent():
  # Not a layer's own weight: a module that never steps (an export
  # script rebuilding the table) stays silent as before.
  assert _found("""\
      import tensorflow as tf
      def table():
        w = tf.get_variable('w', [100, 8])
        return tf.gather(tf.pad(w[1:], [[1, 0], [0, 0]]), ids)
      """) == []


_LR = """\
    import numpy as np
    import tensorflow as tf
    import adam
    lr = tf.placeholder(tf.float32, shape=())
    w = tf.get_variable('w', [10, 10])
    {lines}
    """


@pytest.mark.parametrize("lines, expected", [
    ("op = adam.AdamOptimizer(learning_rate=lr * lr_mask[0]).minimize("
     "loss, var_list=[w])", [("grads-mask", 6)]),
    ("op = adam.AdamOptimizer(lr * (np.ones([10, 10]) - np.array("
     "mask[1][0]))).minimize(loss, var_list=[w])", [("grads-mask", 6)]),
    ("opt = adam.AdamOptimizer(learning_rate=lr * 2.0 * keep_mask)\n"
     "    op = opt.minimize(loss)", [("grads-mask", 6)]),
    # The look-alikes: a scalar schedule or decay times the rate, a mask
    # that is not part of the learning rate, no step taken.
    ("op = adam.AdamOptimizer(learning_rate=lr * decay[0]).minimize(loss)",
     []),
    ("op = adam.AdamOptimizer(learning_rate=lr * 0.5).minimize("
     "loss * mask)", []),
    ("opt = adam.AdamOptimizer(learning_rate=lr * lr_mask[0])", []),
])
def test_a_learning_rate_multiplied_by_a_mask(lines, expected):
  assert _found(_LR.format(lines=lines)) == expected


_OPTIMIZER = """\
    import tensorflow as tf
    class Opt(tf.compat.v1.train.Optimizer):
      def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        ops = []
        for grad, param in grads_and_vars:
          if {test}:
            rate = self.lr
          else:
            rate = 0.0
          {update}
          ops.append(param.assign(param - update))
        return tf.group(*ops)
    """


@pytest.mark.parametrize("test, update, expected", [
    ("param.name.startswith('encoder/')", "update = rate * grad",
     [("grads-mask", 10)]),
    ("'layer_' in param.name", "update = rate * self.lr * grad / 2",
     [("grads-mask", 10)]),
    # The look-alikes: the rate zero in a warm-up of every variable (a
    # schedule, not a part), a zero weight decay of the biases (a term of
    # the update, not a factor), a zero rate the update does not read.
    ("global_step > 100", "update = rate * grad", []),
    ("'bias' not in param.name", "update = grad + rate * param", []),
    ("param.name.startswith('encoder/')", "update = self.lr * grad", []),
])
def test_a_hand_written_optimizer_zeroing_the_rate_by_name(test, update,
                                                           expected):
  assert _found(_OPTIMIZER.format(test=test, update=update)) == expected
