"""`tfpartial scan`: forward 0/1 masks known by what the code does, not by
their spelling: a non-trainable variable of ones that a pruning round
writes (whatever its name), an array loaded from a file, one mask per task
read by index (BeyondML's multitask kernel); and the look-alikes that stay
silent: a non-trainable scale or running statistic, a fixed connectivity
computed from the architecture alone (corpus rule: BUILDING.md,
"Structural masks"), a ones variable nothing ever writes."""

import pytest

import scanned


def _mixes(code):
  return scanned.in_text(code, "stop-gradient-mix")


POSITIVE = {
    # Beyond-ML-Labs/BeyondML MultiMaskedDense: one kernel and one
    # non-trainable mask per task, read by the task's index in a
    # comprehension (the index is no data of the mask).
    "one kernel and one mask per task, by index": ("""\
        class MultiMaskedDense(tf.keras.layers.Layer):
          def build(self, input_shape):
            self.w = self.add_weight(shape=(2, 8, 4), trainable=True)
            self.b = self.add_weight(shape=(2, 4), trainable=True)
            self.w_mask = self.add_weight(shape=(2, 8, 4), trainable=False,
                                          initializer="ones")

          def call(self, inputs):
            output_tensor = [
                tf.matmul(inputs[i], self.w[i] * self.w_mask[i])
                for i in range(len(inputs))]
            output_tensor = [output_tensor[i] + self.b[i]
                             for i in range(len(output_tensor))]
            return [tf.nn.relu(t) for t in output_tensor]

        model = tf.keras.Model(ins, MultiMaskedDense()(ins))
        model.fit(x, y)
        """, [("stop-gradient-mix", 10)]),
    # A lottery ticket whose mask is not named for one: a non-trainable
    # variable of ones, set from the kernel's magnitude between rounds.
    "a non-trainable ones variable set between rounds, any name": ("""\
        class Sparse(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.connectivity = self.add_weight(
                "connectivity", (shape[-1], 10), initializer="ones",
                trainable=False)

          def call(self, x):
            return tf.matmul(x, self.kernel * self.connectivity)

        def cut(layer, rate):
          w = tf.abs(layer.kernel * layer.connectivity)
          layer.connectivity.assign(tf.cast(
              w > tfp.stats.percentile(w, rate), tf.float32))

        model = tf.keras.Sequential([Sparse()])
        model.compile("adam", "mse")
        for round in range(5):
          model.fit(x, y, epochs=10)
          cut(model.layers[0], 20)
        """, [("stop-gradient-mix", 9)]),
    # An array loaded from a file under a name that is no mask's.
    "a table times an array loaded from a file, any name": ("""\
        import numpy as np
        table = tf.get_variable("table", [1000, 64])
        keep = np.load("keep_rows.npy")
        rows = tf.nn.embedding_lookup(table * keep, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(rows))
        """, [("stop-gradient-mix", 4)]),
}

NEGATIVE = {
    # A non-trainable scalar scale: no element of the kernel is replaced.
    "a non-trainable scalar scale": """\
        class Scaled(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.gain = tf.Variable(1.0, trainable=False)

          def call(self, x):
            return tf.matmul(x, self.kernel * self.gain)

        def anneal(layer):
          layer.gain.assign(layer.gain * 0.5)

        model = tf.keras.Sequential([Scaled()])
        model.fit(x, y)
        anneal(model.layers[0])
        """,
    # A running statistic kept non-trainable and written each step.
    "a running statistic written each step": """\
        class Norm(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.scale = self.add_weight("scale", (shape[-1], 10),
                                         initializer="ones", trainable=False)

          def call(self, x):
            self.scale.assign(0.9 * self.scale + 0.1 * tf.abs(self.kernel))
            return tf.matmul(x, self.kernel * self.scale)

        model = tf.keras.Sequential([Norm()])
        model.fit(x, y)
        """,
    # A fixed connectivity built from the architecture alone (a small-world
    # graph of ones, rewired at random once): not an instance.
    "a connectivity built from ones in the code": """\
        import numpy as np

        class Connected(tf.keras.layers.Dense):
          def __init__(self, units, connections, **kwargs):
            self.connections = connections
            super().__init__(units, **kwargs)

          def call(self, inputs):
            return tf.matmul(inputs, self.kernel * self.connections)

        mat = np.ones((128, 128))
        mat[np.random.rand(128, 128) < 0.1] = 0
        model = tf.keras.Sequential([Connected(128, connections=mat)])
        model.fit(x, y)
        """,
    # A variable of ones nothing writes: it masks nothing.
    "a non-trainable ones variable nothing writes": """\
        class Plain(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.factor = self.add_weight("factor", (shape[-1], 10),
                                          initializer="ones", trainable=False)

          def call(self, x):
            return tf.matmul(x, self.kernel * self.factor)

        model = tf.keras.Sequential([Plain()])
        model.fit(x, y)
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_fixed_mask_known_by_what_it_is_is_found(name):
  code, expected = POSITIVE[name]
  assert _mixes(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_kept_by_no_mask_is_silent(name):
  assert _mixes(NEGATIVE[name]) == []
