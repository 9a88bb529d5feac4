"""`tfpartial scan`'s `weight-remask` where a function makes a variable
as a scratch buffer and zeroes some of its elements at once (part
thirty-four's contrastive loss: `logits_mask = tf.Variable(tf.ones_like(
mask))`, then `logits_mask.scatter_nd_update(indices, zeros)`, the mask
of all but each anchor multiplied into the logits): each write sets the
first value of a variable made just before it, keeping nothing fixed
while the model trains. A variable made once and zeroed again at every
step stays a re-mask. The scratch buffer is reported again since mend
forty-d removed the rule that silenced it: the rule could not tell it
from a variable a wrapped step makes, zeroes and trains. Each source is
synthetic."""

import scanned

_LOSS = """\
    import tensorflow as tf


    class Model(tf.keras.Model):

        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(8)

        def contrastive_loss(self, features, labels):
            logits = tf.matmul(features, tf.transpose(features))
            mask = tf.cast(tf.equal(labels, tf.transpose(labels)), tf.float32)
            logits_mask = tf.Variable(tf.ones_like(mask))
            indices = tf.reshape(tf.range(0, tf.shape(mask)[0]), (-1, 1))
            indices = tf.concat([indices, indices], axis=1)
            logits_mask.scatter_nd_update(indices, tf.zeros(tf.shape(mask)[0]))
            masked = tf.exp(logits) * logits_mask
            return -tf.reduce_mean(logits - tf.math.log(
                tf.reduce_sum(masked, 1, keepdims=True)))

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.contrastive_loss(self.dense(x), y)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}
    """


def test_a_scratch_mask_zeroed_where_it_is_made_is_found_again():
  assert scanned.found(_LOSS) == [("weight-remask", 16)]


_KEPT = """\
    import tensorflow as tf

    kernel = tf.Variable(tf.ones([8, 8]))
    rows = tf.constant([[0], [3]])

    def train(x, y, steps):
        for _ in range(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, kernel) - y))
            grads = tape.gradient(loss, [kernel])
            opt.apply_gradients(zip(grads, [kernel]))
            kernel.scatter_nd_update(rows, tf.zeros([2, 8]))
    """


def test_a_trained_kernel_zeroed_after_each_step_is_found():
  assert scanned.found(_KEPT) == [("weight-remask", 12)]


def test_a_kernel_made_in_the_function_and_zeroed_in_its_loop_is_found():
  text = _KEPT.replace("kernel = tf.Variable(tf.ones([8, 8]))\n", "").replace(
      "    def train(x, y, steps):\n",
      "    def train(x, y, steps):\n"
      "        kernel = tf.Variable(tf.ones([8, 8]))\n")
  assert scanned.found(text) == [("weight-remask", 12)]


_GRAPH = """\
    import tensorflow as tf


    def build(x, y):
        kernel = tf.Variable(tf.ones([8, 8]))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, kernel) - y))
        train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
        with tf.control_dependencies([train_op]):
            reset = kernel.scatter_nd_update([[0], [3]], tf.zeros([2, 8]))
        return reset


    step = build(x, y)
    for _ in range(100):
        sess.run(step)
    """


def test_a_graph_write_kept_to_run_after_each_step_is_found():
  assert scanned.found(_GRAPH) == [("weight-remask", 9)]
