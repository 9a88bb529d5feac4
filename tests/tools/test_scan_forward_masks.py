"""`tfpartial scan`: a trainable variable multiplied in the forward pass by
a fixed 0/1 mask (the lottery-ticket layers' `self.kernel * self.mask`, a
placeholder fed the same mask each step, STAMP's `table *= mask` on an
embedding table): the masked elements get a zero gradient and never
train (corpus rule: tests/tools/scan_corpus/BUILDING.md, "Tables joined
from constants"); and the look-alikes that freeze nothing: dropout,
attention and loss masks on activations, a mask recomputed from the
weights' magnitude, a random DropConnect mask, a trainable gate, a
straight-through estimator, a re-mask written back, a constraint."""

import pytest

import scanned


def _mixes(code):
  return scanned.in_text(code, "stop-gradient-mix")


POSITIVE = {
    # kenichdietrich/LotteryTicketHypothesis: a non-trainable variable of
    # ones, set between rounds, multiplies the kernel in `call`.
    "a layer's kernel times its non-trainable mask variable": ("""\
        class LotteryLinear(tf.keras.layers.Layer):
          def __init__(self, units=128):
            super().__init__()
            self.units = units

          def build(self, input_shape):
            self.kernel = tf.Variable(
                tf.random.normal((input_shape[-1], self.units)),
                trainable=True, name="kernel")
            self.mask = tf.Variable(
                tf.ones((input_shape[-1], self.units)), trainable=False,
                name="kernel_mask")

          def call(self, inputs):
            masked_kernel = self.kernel * self.mask
            return tf.nn.relu(inputs @ masked_kernel)

        model = tf.keras.Sequential([LotteryLinear(10)])
        model.compile("adam", "mse")
        model.fit(x, y)
        """, [("stop-gradient-mix", 15)]),
    # SamuelGabriel/LotteryTicketHypothesis-TensorFlow: a placeholder of
    # the weight's shape, fed the same mask each step.
    "a weight times a placeholder of its shape": ("""\
        x = tf.placeholder(tf.float32, shape=[None, 784])
        prune_1 = tf.placeholder(tf.float32, shape=[784, 300])
        W_1 = tf.Variable(tf.truncated_normal([784, 300], stddev=0.1))
        h = tf.nn.relu(tf.matmul(x, W_1 * prune_1))
        train_step = tf.train.GradientDescentOptimizer(0.05).minimize(
            loss(h))
        for i in range(1000):
          train_step.run(feed_dict={x: batch, prune_1: p_1})
        """, [("stop-gradient-mix", 4)]),
    # uestcnlp/STAMP: the embedding table masked in place before lookups.
    "an embedding table masked in place": ("""\
        class Stamp:
          def build_model(self):
            self.embe_dict = tf.Variable(self.pre_embedding,
                                         dtype=tf.float32, trainable=True)
            self.pe_mask = tf.Variable(self.pre_embedding_mask,
                                       dtype=tf.float32, trainable=False)
            self.embe_dict *= self.pe_mask
            inputs = tf.nn.embedding_lookup(self.embe_dict, self.inputs)
            self.optimize = tf.train.AdamOptimizer(0.01).minimize(
                loss(inputs))
        """, [("stop-gradient-mix", 7)]),
    # The same by reassignment, with a NumPy mask loaded from a file.
    "a table times a mask loaded from a file": ("""\
        import numpy as np
        table = tf.get_variable("table", [1000, 64])
        keep_mask = np.load("mask.npy")
        table = table * keep_mask
        rows = tf.nn.embedding_lookup(table, ids)
        train_op = tf.train.AdamOptimizer().minimize(loss(rows))
        """, [("stop-gradient-mix", 4)]),
    # A lottery ticket: the mask pruned by magnitude between rounds of
    # training (`fit` runs whole, then the mask is set): fixed in a round.
    "a mask pruned between rounds of fit": ("""\
        class LotteryLinear(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.mask = tf.Variable(tf.ones((shape[-1], 10)),
                                    trainable=False)

          def call(self, x):
            return tf.matmul(x, self.kernel * self.mask)

        def prune(layer, rate):
          w = tf.abs(layer.kernel * layer.mask)
          layer.mask.assign(tf.cast(w > tfp.stats.percentile(w, rate),
                                    tf.float32))

        model = tf.keras.Sequential([LotteryLinear()])
        model.compile("adam", "mse")
        for round in range(5):
          model.fit(x, y, epochs=10)
          prune(model.layers[0], 20)
        """, [("stop-gradient-mix", 8)]),
}

NEGATIVE = {
    # Masks on activations: dropout, attention, a sequence's loss.
    "dropout, attention and loss masks": """\
        def forward(x, w, seq_mask, attention_mask):
          h = tf.matmul(x, w)
          dropout_mask = tf.cast(tf.random.uniform(tf.shape(h)) < 0.9,
                                 tf.float32)
          h = h * dropout_mask
          scores = h * attention_mask + (1.0 - attention_mask) * -1e9
          return tf.reduce_sum(scores * seq_mask)

        w = tf.Variable(tf.zeros([10, 10]))
        train_op = tf.train.AdamOptimizer().minimize(forward(x, w, m, a))
        """,
    # Magnitude pruning recomputed from the weights in the forward pass.
    "a mask recomputed from the kernel's magnitude": """\
        class Pruned(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))

          def call(self, x):
            mask = tf.cast(tf.abs(self.kernel) > 0.01, tf.float32)
            return x @ (self.kernel * mask)

        model = tf.keras.Sequential([Pruned()])
        model.fit(x, y)
        """,
    # A mask variable rewritten in `call` each step (a pruning schedule).
    "a mask variable rewritten each step in call": """\
        class Pruned(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.mask = self.add_weight("mask", (shape[-1], 10),
                                        initializer="ones", trainable=False)

          def call(self, x):
            self.mask.assign(new_mask_of(self.kernel))
            return x @ (self.kernel * self.mask)

        model = tf.keras.Sequential([Pruned()])
        model.fit(x, y)
        """,
    # DropConnect: a random mask on the weight, drawn each step.
    "DropConnect": """\
        w = tf.Variable(tf.zeros([10, 10]))
        drop_mask = tf.cast(tf.random.uniform([10, 10]) < 0.5, tf.float32)
        h = tf.matmul(x, w * drop_mask)
        train_op = tf.train.AdamOptimizer().minimize(loss(h))
        """,
    # A learned gate: the "mask" is a trainable variable.
    "a trainable mask (a learned gate)": """\
        w = tf.Variable(tf.zeros([10, 10]))
        gate_mask = tf.Variable(tf.ones([10, 10]))
        h = tf.matmul(x, w * gate_mask)
        train_op = tf.train.AdamOptimizer().minimize(loss(h))
        """,
    # A straight-through estimator: the masked weight forward, the
    # gradient to the whole weight.
    "a straight-through estimator": """\
        import numpy as np
        w = tf.Variable(tf.zeros([10, 10]))
        keep_mask = np.ones((10, 10), np.float32)
        w_used = w + tf.stop_gradient(w * keep_mask - w)
        h = tf.matmul(x, w_used)
        train_op = tf.train.AdamOptimizer().minimize(loss(h))
        """,
    # A re-mask written back (weight-remask's, not a forward mask) and a
    # constraint.
    "a re-mask written back and a constraint": """\
        import numpy as np
        mask = np.tril(np.ones((10, 10), np.float32))

        class Masked(tf.keras.layers.Layer):
          def build(self, shape):
            self.conv = tf.keras.layers.Dense(
                10, kernel_constraint=lambda w: w * mask)
            self.mask = tf.constant(mask)

          def call(self, x):
            self.conv.kernel.assign(self.conv.kernel * self.mask)
            return self.conv(x)

        model = tf.keras.Sequential([Masked()])
        model.fit(x, y)
        """,
    # Glow's LU-decomposed 1x1 convolution: the triangle's mask is the
    # parametrization's shape.
    "a triangular factor of an LU parametrization": """\
        import numpy as np
        l = tf.get_variable("L", initializer=np_l)
        l_mask = np.tril(np.ones([8, 8], dtype=np.float32), -1)
        l = l * l_mask + tf.eye(8, 8)
        w = tf.matmul(p, l)
        train_op = tf.train.AdamOptimizer().minimize(loss(w))
        """,
    # A PixelCNN's causal kernel: a pattern the code builds from ones.
    "a causal mask built in the layer": """\
        import numpy as np

        class MaskedConv2D(tf.keras.layers.Layer):
          def build(self, input_shape):
            self.w = self.add_weight(shape=[5, 5, input_shape[-1], 8],
                                     trainable=True)
            mask = np.ones(25, dtype=np.float32)
            mask[13:] = 0
            mask = mask.reshape((5, 5, 1, 1))
            self.mask = tf.constant(mask, dtype="float32")

          def call(self, inputs):
            masked_w = tf.math.multiply(self.w, self.mask)
            return tf.nn.conv2d(inputs, masked_w, 1, "SAME")

        model = tf.keras.Sequential([MaskedConv2D()])
        model.fit(x, y)
        """,
    # Movement pruning: the mask is the top-k of trainable scores, passed
    # straight through to them (learned, not fixed).
    "a top-k mask of trainable scores, straight through": """\
        def topk_mask(scores, keep):
          k = tf.cast(keep * tf.cast(tf.size(scores), tf.float32), tf.int32)
          threshold = tf.math.top_k(tf.reshape(scores, [-1]), k).values[-1]
          return tf.cast(scores >= threshold, scores.dtype)

        class MovementDense(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.scores = self.add_weight("scores", (shape[-1], 10))

          def call(self, x):
            mask = topk_mask(self.scores, 0.1)
            mask = self.scores + tf.stop_gradient(mask - self.scores)
            return tf.matmul(x, self.kernel * mask)

        model = tf.keras.Sequential([MovementDense()])
        model.fit(x, y)
        """,
    # A soft mask: the sigmoid of trainable mask logits (a learned gate).
    "a sigmoid of trainable mask logits": """\
        class MaskedDense(tf.keras.layers.Layer):
          def build(self, shape):
            self.w = self.add_weight("w", (shape[-1], 10))
            self.mask_logits = self.add_weight("mask_logits",
                                               (shape[-1], 10))

          def call(self, x):
            soft_mask = tf.sigmoid(self.mask_logits)
            return tf.matmul(x, self.w * soft_mask)

        model = tf.keras.Sequential([MaskedDense()])
        model.fit(x, y)
        """,
    # DropConnect fed from NumPy: a placeholder of the weight's shape fed a
    # fresh random mask each step.
    "a placeholder fed a random mask each step": """\
        import numpy as np
        drop_mask = tf.placeholder(tf.float32, shape=[784, 300])
        W_1 = tf.Variable(tf.truncated_normal([784, 300], stddev=0.1))
        h = tf.nn.relu(tf.matmul(x, W_1 * drop_mask))
        train_step = tf.train.GradientDescentOptimizer(0.05).minimize(
            loss(h))
        for i in range(1000):
          m = np.random.binomial(1, 0.5, size=(784, 300))
          sess.run(train_step, feed_dict={x: batch, drop_mask: m})
        """,
    # MADE: masks from the units' degrees, compared in a helper (the
    # autoregressive structure, no parameter of it).
    "MADE masks from degrees in a helper": """\
        import numpy as np

        def get_mask(in_degrees, out_degrees):
          return (out_degrees[:, None] >= in_degrees[None, :]).astype(
              np.float32).T

        class MaskedDense(tf.keras.layers.Layer):
          def __init__(self, units, in_deg, out_deg):
            super().__init__()
            self.units, self.in_deg, self.out_deg = units, in_deg, out_deg

          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], self.units))
            self.mask = tf.constant(get_mask(self.in_deg, self.out_deg))

          def call(self, x):
            return tf.matmul(x, self.kernel * self.mask)

        model = tf.keras.Sequential([MaskedDense(10, a, b)])
        model.fit(x, y)
        """,
    "MADE masks from random degrees, one per layer": """\
        import numpy as np

        def create_masks(d_in, hidden):
          degrees = [np.arange(1, d_in + 1)]
          for h in hidden:
            degrees.append(np.random.randint(1, d_in, size=h))
          masks = []
          for d0, d1 in zip(degrees[:-1], degrees[1:]):
            masks.append((d0[:, None] <= d1[None, :]).astype(np.float32))
          return masks

        masks = create_masks(784, [500, 500])
        h = x
        for i, mask in enumerate(masks):
          W = tf.get_variable("W%d" % i, mask.shape)
          h = tf.nn.relu(tf.matmul(h, W * mask))
        train_op = tf.train.AdamOptimizer().minimize(tf.reduce_mean(h))
        """,
    # RigL: the mask is dropped and regrown every hundred steps, in the
    # loop that applies the gradients (sparse training, no freeze).
    "a mask regrown in the loop of steps (RigL)": """\
        class SparseDense(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.mask = self.add_weight("mask", (shape[-1], 10),
                                        initializer="ones", trainable=False)

          def call(self, x):
            return tf.matmul(x, self.kernel * self.mask)

        def rigl_update(layer, grad, n):
          score = tf.abs(layer.kernel * layer.mask) + tf.abs(grad)
          _, keep = tf.math.top_k(tf.reshape(score, [-1]), n)
          new_mask = tf.scatter_nd(keep[:, None], tf.ones([n]), [640])
          layer.mask.assign(tf.reshape(new_mask, layer.mask.shape))

        model = tf.keras.Sequential([SparseDense()])
        opt = tf.keras.optimizers.Adam()
        for step, (x, y) in enumerate(data):
          with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
          grads = tape.gradient(loss, model.trainable_variables)
          opt.apply_gradients(zip(grads, model.trainable_variables))
          if step % 100 == 0:
            rigl_update(model.layers[0], grads[0], 300)
        """,
    # SET: the mask evolves at the end of each epoch, in a callback.
    "a mask evolved by a callback each epoch (SET)": """\
        import numpy as np

        class MaskedDense(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.mask = tf.Variable(np.ones((shape[-1], 10), np.float32),
                                    trainable=False)

          def call(self, x):
            return x @ (self.kernel * self.mask)

        class SETCallback(tf.keras.callbacks.Callback):
          def on_epoch_end(self, epoch, logs=None):
            for layer in self.model.layers:
              w = layer.kernel.numpy() * layer.mask.numpy()
              keep = np.abs(w) > np.percentile(np.abs(w[w != 0]), 30)
              regrow = np.random.rand(*keep.shape) < 0.01
              layer.mask.assign((keep | regrow).astype("float32"))

        model = tf.keras.Sequential([MaskedDense()])
        model.compile("adam", "mse")
        model.fit(x, y, callbacks=[SETCallback()])
        """,
    # Network slimming in a model's own train_step: each layer's channel
    # mask recomputed from its kernel every step.
    "masks recomputed in a model's train_step": """\
        class Gated(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))
            self.channel_mask = tf.Variable(tf.ones((shape[-1], 10)),
                                            trainable=False)

          def call(self, x):
            return tf.matmul(x, self.kernel * self.channel_mask)

        class Slim(tf.keras.Model):
          def update_masks(self):
            for layer in self.layers:
              norm = tf.abs(layer.kernel)
              layer.channel_mask.assign(tf.cast(norm > 0.01, tf.float32))

          def train_step(self, data):
            self.update_masks()
            return super().train_step(data)

        model = Slim([Gated()])
        model.fit(x, y)
        """,
    # olfaction_evolution: a scalar variable scales a fixed connectivity:
    # no element of the variable is replaced.
    "a scalar variable times a mask": """\
        K = tf.get_variable("K", shape=(), dtype=tf.float32, trainable=True)
        w_mask = tf.get_variable("mask", shape=(50, 2500), trainable=False,
                                 initializer=tf.constant_initializer(m))
        w_glo = tf.multiply(K, w_mask)
        h = tf.matmul(x, w_glo)
        train_op = tf.train.AdamOptimizer().minimize(loss(h))
        """,
    # The pruned weights read only to evaluate: the steps train W whole.
    "a pruned copy read only by an evaluation function": """\
        import numpy as np
        W = tf.Variable(tf.random.normal([784, 10]))
        prune_mask = np.load("mask.npy")
        opt = tf.keras.optimizers.SGD(0.1)

        def train_step(x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(x, W) - y) ** 2)
          opt.apply_gradients([(tape.gradient(loss, W), W)])

        def evaluate_pruned(x):
          return tf.matmul(x, W * prune_mask)

        for x, y in data:
          train_step(x, y)
        print(evaluate_pruned(x_test))
        """,
    "a mask applied only when not training": """\
        import numpy as np

        class Net(tf.keras.Model):
          def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(10)
            self.eval_mask = tf.Variable(np.load("mask.npy"), trainable=False)

          def call(self, x, training=False):
            if training:
              return self.dense(x)
            return tf.matmul(x, self.dense.kernel * self.eval_mask)

        model = Net()
        model.compile("adam", "mse")
        model.fit(x, y)
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_variable_under_a_fixed_forward_mask_is_found(name):
  code, expected = POSITIVE[name]
  assert _mixes(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_is_not_a_forward_mask(name):
  assert _mixes(NEGATIVE[name]) == []
