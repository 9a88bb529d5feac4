"""`tfpartial scan`: TF1 gradients kept on the model and only ever
fetched by `run` (AnatoliiPotapov/MNIST-EWC's `self.grads =
optimizer.compute_gradients(cost, [w['h1'], w['h2'], w['out']])`, run
from a notebook to square them into a Fisher in NumPy) leave the graph
as numbers: they train nothing, so the variables they leave out are
left out of no step. The same gradients applied in the graph, or read
by anything but a fetch, stay found."""

import pytest

import scanned

_TF1 = """\
    import numpy as np
    import tensorflow as tf

    class MLP:
      def __init__(self, x, y):
        self.w = {{"h1": tf.Variable(tf.zeros([4, 8])),
                   "h1e": tf.Variable(tf.zeros([4, 8]), trainable=False),
                   "out": tf.Variable(tf.zeros([8, 2])),
                   "oute": tf.Variable(tf.zeros([8, 2]), trainable=False)}}
        self.fisher = {{"h1": tf.Variable(tf.zeros([4, 8])),
                        "out": tf.Variable(tf.zeros([8, 2]))}}

        def mlp(x, w):
          return tf.matmul(tf.nn.relu(tf.matmul(x, w["h1"])), w["out"])

        self.cost = tf.reduce_mean((mlp(x, self.w) - y) ** 2)
        self.optimizer = tf.train.AdamOptimizer(0.001)
        self.train = self.optimizer.minimize(self.cost)
        self.grads = self.optimizer.compute_gradients(
            self.cost, [self.w["h1"], self.w["out"]])
        ewc = sum(tf.reduce_sum(self.fisher[k] * (self.w[k] - self.w[k + "e"])
                                ** 2) for k in ("h1", "out"))
        self.train_ewc = self.optimizer.minimize(self.cost + ewc)
        {use}

    def fisher(sess, model, feed):
      g = sess.run([model.grads], feed_dict=feed)
      (g1, _), (g2, _) = g[0]
      return np.square(g1), np.square(g2)
    """

SILENT = {
    "tf1: gradients kept on the model, only fetched":
        _TF1.format(use=""),
}

FOUND = {
    "tf1: the same gradients applied in the graph": (_TF1.format(
        use="self.step = self.optimizer.apply_gradients(self.grads)"), 20),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_gradients_only_fetched_leave_nothing_out(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_same_gradients_applied_are_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]
