"""`tfpartial scan`: two forms of part 25 that keep some rows of one
table from training. A constructor's flag that turns on the zero row
(Baidu AnyQ's `EmbeddingEnhancedLayer(..., zero_pad=True)`, Kyubyong's
`zero_pad` moved into a class's `__init__`), read from what the class's
constructions pass; and a sparse gradient rebuilt from a few rows
gathered out of a dense one (pragmatic-tuna's `tf.IndexedSlices(
[tf.gather(g, i)], [i])`), the only rows that train; and fixed masks
taken out of a list one per gradient (sHAM's `self.temp_masks.pop(0)`).
The look-alikes: a flag every construction turns off, sparse slices
rebuilt whole or reordered, rows of a table (not of a gradient) made into
slices, masks drawn each step or plain scales popped."""

import pytest

import scanned

_LAYER = """\
    import tensorflow as tf


    class EmbeddingLayer(object):
      def __init__(self, vocab_size, dim, zero_pad={default}, scale=True):
        self.embedding = tf.get_variable("embedding", [vocab_size, dim])
        if zero_pad:
          self.embedding = tf.concat(
              (tf.zeros(shape=[1, dim]), self.embedding[1:]), 0)
        self.scale = scale

      def ops(self, ids):
        return tf.nn.embedding_lookup(self.embedding, ids)
    """

_NET = """\
    import tensorflow as tf
    import layers


    class Net(object):
      def __init__(self, vocab_size, dim):
        self.emb_layer = layers.EmbeddingLayer(vocab_size, dim{passed})

      def predict(self, ids):
        return tf.reduce_sum(self.emb_layer.ops(ids), -1)


    def train(ids, labels):
      net = Net(1000, 16)
      loss = tf.reduce_mean(tf.square(net.predict(ids) - labels))
      return tf.train.AdamOptimizer(0.1).minimize(loss)
    """


def _layer_project(default, passed):
  return {"layers.py": _LAYER.format(default=default),
          "net.py": _NET.format(passed=passed)}


def _mixes(files):
  return [(path, line) for idiom, path, line in scanned.in_project(files)
          if idiom == "stop-gradient-mix"]


# (the default of `zero_pad`, what the construction passes, the findings)
CONSTRUCTED = {
    # AnyQ: every net builds the layer with `zero_pad=True`.
    "turned on by the construction": (
        "True", ", zero_pad=True, scale=False", [("layers.py", 8)]),
    "turned on by position": ("False", ", True", [("layers.py", 8)]),
    "on by default, the construction passing nothing": (
        "True", "", [("layers.py", 8)]),
    "turned off by the only construction": (
        "True", ", zero_pad=False", []),
    "off by default, the construction passing nothing": ("False", "", []),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTED))
def test_a_constructor_flag_is_read_from_the_constructions(name):
  default, passed, expected = CONSTRUCTED[name]
  assert _mixes(_layer_project(default, passed)) == expected


def test_a_construction_that_turns_it_on_beside_one_that_does_not():
  files = _layer_project("False", ", zero_pad=False")
  files["tagger.py"] = """\
      import layers

      chars = layers.EmbeddingLayer(100, 8, zero_pad=True)
      """
  assert _mixes(files) == [("layers.py", 8)]


def _grads_masks(code):
  return scanned.in_text(code, "grads-mask")


POSITIVE = {
    # pragmatic-tuna's vg_rsa.py: only the row of one word is applied.
    "one gathered row of a dense gradient, TF1": ("""\
        def build(loss, embeddings, word_id, lr):
          opt = tf.train.GradientDescentOptimizer(lr)
          grad = opt.compute_gradients(loss, var_list=[embeddings])[0][0]
          row = tf.gather(grad, word_id)
          sliced = tf.IndexedSlices([row], [word_id])
          return opt.apply_gradients([(sliced, embeddings)])
        """, [("grads-mask", 5)]),
    # The same with a list of ids, inline, on a tape.
    "rows of chosen ids gathered inline, TF2": ("""\
        def step(model, table, x, y, ids):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
          grad = tape.gradient(loss, table)
          kept = tf.IndexedSlices(tf.gather(grad, ids), ids,
                                  tf.shape(table, out_type=tf.int64))
          optimizer.apply_gradients([(kept, table)])
        """, [("grads-mask", 5)]),
    # sHAM's train_step_pr: masks fixed once by magnitude, taken out of a
    # copy of the list one per pruned kernel each step.
    "fixed masks popped from a copy each step": ("""\
        import numpy as np


        class Pruner(object):
          def __init__(self, model):
            self.model = model
            self.optimizer = tf.keras.optimizers.SGD(0.1)

          def apply_pruning(self, percent):
            self.masks = []
            for layer in self.model.layers:
              kernel = layer.get_weights()[0]
              self.masks.append(
                  np.abs(kernel) > np.percentile(np.abs(kernel), percent))

          @tf.function
          def train_step(self, x, y):
            with tf.GradientTape() as tape:
              loss = tf.reduce_mean(tf.square(self.model(x) - y))
            grads = tape.gradient(loss, self.model.trainable_weights)
            self.temp_masks = self.masks.copy()
            pruned = [tf.multiply(grads[i], tf.cast(self.temp_masks.pop(0),
                                                    tf.float32))
                      if i % 2 == 0 else grads[i] for i in range(len(grads))]
            self.optimizer.apply_gradients(
                zip(pruned, self.model.trainable_weights))
        """, [("grads-mask", 22)]),
}

NEGATIVE = {
    "masks drawn each step, popped one per gradient": """\
        def train_step(model, optimizer, x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
          grads = tape.gradient(loss, model.trainable_weights)
          drops = [tf.cast(tf.random.uniform(tf.shape(g)) > 0.5, tf.float32)
                   for g in grads]
          kept = [g * drops.pop(0) for g in grads]
          optimizer.apply_gradients(zip(kept, model.trainable_weights))
        """,
    "scales popped from a list of numbers": """\
        def train_step(model, optimizer, x, y, scales):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
          grads = tape.gradient(loss, model.trainable_weights)
          left = list(scales)
          kept = [g * left.pop(0) for g in grads]
          optimizer.apply_gradients(zip(kept, model.trainable_weights))
        """,
    "a sparse gradient rebuilt whole": """\
        def build(loss, embeddings, lr):
          opt = tf.train.GradientDescentOptimizer(lr)
          grad = opt.compute_gradients(loss, var_list=[embeddings])[0][0]
          same = tf.IndexedSlices(grad.values, grad.indices, grad.dense_shape)
          return opt.apply_gradients([(same, embeddings)])
        """,
    "a sparse gradient's slices reordered": """\
        def build(loss, embeddings, order, lr):
          opt = tf.train.GradientDescentOptimizer(lr)
          grad = opt.compute_gradients(loss, var_list=[embeddings])[0][0]
          shuffled = tf.IndexedSlices(tf.gather(grad.values, order),
                                      tf.gather(grad.indices, order))
          return opt.apply_gradients([(shuffled, embeddings)])
        """,
    "rows of a table, not of a gradient, made into slices": """\
        def build(loss, embeddings, params, ids, lr):
          opt = tf.train.GradientDescentOptimizer(lr)
          step = opt.minimize(loss)
          rows = tf.IndexedSlices(tf.gather(params, ids), ids)
          return step, tf.scatter_update(embeddings, rows.indices, rows.values)
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_gathered_rows_of_a_gradient_are_found(name):
  code, expected = POSITIVE[name]
  assert _grads_masks(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_slices_that_keep_every_row_are_silent(name):
  assert _grads_masks(NEGATIVE[name]) == []
