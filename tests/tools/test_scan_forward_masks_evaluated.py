"""`tfpartial scan`: forward 0/1 masks evaluated out of the graph from the
trained weights: a mask baked into a constant once after a first stage
(`tf.constant(sess.run(tf.abs(w) > t))`, DeepSymReg's MaskedSymbolicNet),
a placeholder fed, by its graph name, a thresholding of the session's
values (SINDy autoencoders' sequential thresholding); and the look-alikes
that stay silent: magnitude pruning recomputed in the graph or in `call`,
a MADE's degrees or a causal triangle fed or evaluated, a dropout draw, a
mask of the data (corpus rule: BUILDING.md, "Structural masks")."""

import pytest

import scanned

POSITIVE = {
    # samuelkim314/DeepSymReg utils/symbolic_network.py: the weights of a
    # first stage, masked by their own magnitude evaluated once, are
    # handed to a new network that fine-tunes the rest.
    "a mask of the weights' magnitude evaluated once": ({"t.py": """\
        class Net:
          def __init__(self, weights=None):
            if weights is not None:
              self.w = weights
            else:
              self.w = [tf.Variable(tf.random_normal([4, 4]))]

          def __call__(self, x):
            return tf.matmul(x, self.w[0])

        class MaskedNet(Net):
          def __init__(self, sess, unit, threshold=0.01):
            masked = []
            for w_i in unit.w:
              mask = tf.constant(sess.run(tf.abs(w_i) > threshold),
                                 dtype=tf.float32)
              masked.append(tf.multiply(w_i, mask))
            super().__init__(masked)

        net = Net()
        tf.train.AdamOptimizer().minimize(tf.reduce_mean(net(x)))
        step = tf.train.AdamOptimizer().minimize(
            tf.reduce_mean(MaskedNet(sess, net)(x)))
        """}, [("stop-gradient-mix", "t.py", 17)]),
    # kpchamp/SindyAutoencoders: the coefficient mask is a placeholder
    # fed by its graph name from a thresholding of the session's values.
    "a placeholder fed a thresholding by its graph name": ({"net.py": """\
        def network(theta, params):
          n, m = params["library_dim"], params["latent_dim"]
          coefficients = tf.get_variable("coefficients", shape=[n, m])
          mask = tf.placeholder(tf.float32, shape=[n, m],
                                name="coefficient_mask")
          return tf.matmul(theta, mask * coefficients), coefficients
        """, "train.py": """\
        from net import network

        predict, coefficients = network(theta, params)
        step = tf.train.AdamOptimizer().minimize(tf.reduce_mean(predict))
        for i in range(epochs):
          feed = {}
          feed["coefficient_mask:0"] = params["coefficient_mask"]
          sess.run(step, feed_dict=feed)
          if i % 500 == 0:
            params["coefficient_mask"] = np.abs(
                sess.run(coefficients)) > 0.1
        """}, [("stop-gradient-mix", "net.py", 6)]),
}

NEGATIVE = {
    # Magnitude pruning recomputed in the graph with each step.
    "a magnitude mask compared in the graph": """\
        w = tf.Variable(tf.random_normal([4, 4]))
        mask = tf.cast(tf.abs(w) > 0.01, tf.float32)
        y = tf.matmul(x, w * mask)
        step = tf.train.AdamOptimizer().minimize(tf.reduce_mean(y))
        """,
    # Evaluated anew in a layer's `call`: a new mask each step.
    "a magnitude mask evaluated in call": """\
        class Pruned(tf.keras.layers.Layer):
          def build(self, shape):
            self.kernel = self.add_weight("kernel", (shape[-1], 10))

          def call(self, x):
            mask = K.get_value(tf.abs(self.kernel) > 0.01)
            return tf.matmul(x, self.kernel * mask)

        model = tf.keras.Sequential([Pruned()])
        model.fit(x, y)
        """,
    # A MADE's degrees compared in the session: no weight is read.
    "a MADE mask evaluated once": """\
        w = tf.Variable(tf.random_normal([4, 4]))
        mask = tf.constant(sess.run(d_out[:, None] >= d_in[None, :]))
        y = tf.matmul(x, w * mask)
        step = tf.train.AdamOptimizer().minimize(tf.reduce_mean(y))
        """,
    # A causal triangle fed by its graph name.
    "a causal mask fed by its graph name": """\
        w = tf.get_variable("w", shape=[n, n])
        mask = tf.placeholder(tf.float32, shape=[n, n], name="causal_mask")
        y = tf.matmul(x, mask * w)
        step = tf.train.AdamOptimizer().minimize(tf.reduce_mean(y))
        feed = {"causal_mask:0": np.tril(np.ones((n, n)))}
        sess.run(step, feed_dict=feed)
        """,
    # DropConnect: a draw fed each step.
    "a dropout mask fed by its graph name": """\
        w = tf.get_variable("w", shape=[n, n])
        mask = tf.placeholder(tf.float32, shape=[n, n], name="drop_mask")
        y = tf.matmul(x, mask * w)
        step = tf.train.AdamOptimizer().minimize(tf.reduce_mean(y))
        for i in range(100):
          feed = {}
          feed["drop_mask:0"] = np.random.rand(n, n) > 0.5
          sess.run(step, feed_dict=feed)
        """,
    # A mask of the data, not of the session's values.
    "a mask of the batch fed by its graph name": """\
        w = tf.get_variable("w", shape=[n, n])
        mask = tf.placeholder(tf.float32, shape=[n, n], name="input_mask")
        y = tf.matmul(x, mask * w)
        step = tf.train.AdamOptimizer().minimize(tf.reduce_mean(y))
        feed = {}
        feed["input_mask:0"] = batch > 0
        sess.run(step, feed_dict=feed)
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_mask_evaluated_from_the_trained_weights_is_found(name):
  files, expected = POSITIVE[name]
  found = [f for f in scanned.in_project(files)
           if f[0] == "stop-gradient-mix"]
  assert found == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_mask_chosen_by_no_training_is_silent(name):
  assert scanned.in_text(NEGATIVE[name], "stop-gradient-mix") == []
