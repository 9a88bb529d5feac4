"""`tfpartial scan`'s `var-list-filter` on a step over one embedding
variable of a class (`var_list=[self.task_embeddings]`) beside a step that
minimises the same loss over every variable, where the class also builds
layers the loss runs through (part twenty-five's HoMM-style hyper-networks:
new tasks' embeddings fitted while the trained network stays); beside
twins where the class makes no other variable (an embedding-only model),
the steps minimise other losses, or no whole step stands beside it,
silent."""

from tests.tools import scanned

_HYPER = """
import tensorflow as tf
import tensorflow.contrib.slim as slim


class HyperNet(object):
    def __init__(self, x, y, task_ph):
        self.task_embeddings = tf.get_variable('task_embedding', [10, 32])
        emb = tf.nn.embedding_lookup(self.task_embeddings, task_ph)
        hidden = slim.fully_connected(emb, 64)
        task_weights = slim.fully_connected(hidden, 32)
        out = tf.matmul(x, tf.reshape(task_weights, [32, 1]))
        self.loss = tf.reduce_mean(tf.square(out - y))
        optimizer = tf.train.AdamOptimizer(1e-3)
        self.train_op = optimizer.minimize(self.loss)
        self.emb_train_op = optimizer.minimize(
            self.loss, var_list=[self.task_embeddings])
"""


def _found(code):
  return [(idiom, path, line) for idiom, path, line
          in scanned.in_project({"model.py": code})
          if idiom == "var-list-filter"]


def test_an_embedding_step_beside_a_hyper_network_is_found():
  assert _found(_HYPER) == [("var-list-filter", "model.py", 17)]


def test_layers_written_as_tf_layers_are_found():
  code = _HYPER.replace("slim.fully_connected(emb, 64)",
                        "tf.layers.dense(emb, 64)").replace(
                            "slim.fully_connected(hidden, 32)",
                            "tf.layers.dense(hidden, 32)")
  assert _found(code) == [("var-list-filter", "model.py", 17)]


def test_layers_held_as_keras_objects_are_found():
  code = _HYPER.replace(
      "hidden = slim.fully_connected(emb, 64)",
      "self.hidden = tf.keras.layers.Dense(64)\n"
      "        hidden = self.hidden(emb)").replace(
          "slim.fully_connected(hidden, 32)",
          "tf.keras.layers.Dense(32)(hidden)")
  assert _found(code) == [("var-list-filter", "model.py", 18)]


_EMBEDDING_ONLY = """
import tensorflow as tf


class Vectors(object):
    def __init__(self, ids, target):
        self.embeddings = tf.get_variable('embeddings', [1000, 32])
        self.scale = tf.get_variable('scale', [32])
        vectors = tf.nn.embedding_lookup(self.embeddings, ids) * self.scale
        self.loss = tf.reduce_mean(tf.square(vectors - target))
        optimizer = tf.train.AdamOptimizer(1e-3)
        self.train_op = optimizer.minimize(self.loss)
        self.emb_train_op = optimizer.minimize(
            self.loss, var_list=[self.embeddings, self.scale])
"""


def test_a_list_of_every_variable_of_a_model_without_layers_is_silent():
  # The class makes no variable beyond those its list names.
  assert _found(_EMBEDDING_ONLY) == []


def test_an_embedding_step_over_another_loss_is_silent():
  # The layers train by their own loss; the embedding by another.
  code = _HYPER.replace(
      "self.loss, var_list=[self.task_embeddings])",
      "self.emb_loss, var_list=[self.task_embeddings])")
  assert _found(code) == []


def test_an_embedding_step_with_no_whole_step_beside_it_is_silent():
  # No step of the same loss trains more: nothing here says what the
  # loss reaches beyond the embedding.
  code = _HYPER.replace("        self.train_op = optimizer.minimize(self.loss)\n",
                        "")
  assert _found(code) == []
