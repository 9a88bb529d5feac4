"""`tfpartial scan` on a `var_list` filtered by an object's own scope
attribute (`get_collection(TRAINABLE_VARIABLES, scope=self.abs_scope)`),
where the class and its subclasses build their variables under that scope
and no other: the whole object, not a part of it (an RL agent's
parameters, a model library's `get_params`). Beside it, a subclass that
also builds features under another scope: found."""

import scanned

_AGENT = """\
    import tensorflow as tf

    class Agent:
      def __init__(self, scope, lr):
        self.abs_scope = (tf.get_variable_scope().name + '/' + scope).lstrip('/')
        with tf.variable_scope(scope):
          self.logits = tf.layers.dense(self.obs, 4)
          self.loss = tf.reduce_mean(self.logits)
        params = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                   scope=self.abs_scope)
        self.train_op = tf.train.AdamOptimizer(lr).minimize(
            self.loss, var_list=params)
    """

_LIBRARY = {
    "lib/model.py": """\
        import tensorflow as tf

        class Model:
          def __init__(self, scope=None):
            self.scope = scope or self.__class__.__name__

          def get_params(self):
            return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     self.scope + "/")
        """,
    "lib/zoo.py": """\
        import tensorflow as tf
        from lib.model import Model

        class CNN(Model):
          def fprop(self, x):
            with tf.variable_scope(self.scope, reuse=tf.AUTO_REUSE):
              return tf.layers.dense(x, 10)
        """,
    "train.py": """\
        import tensorflow as tf
        from lib.zoo import CNN

        model = CNN("cnn")
        loss = tf.reduce_mean(model.fprop(x))
        op = tf.train.AdamOptimizer(1e-3).minimize(
            loss, var_list=model.get_params())
        """,
}


def test_an_agent_trained_on_its_own_scope_is_silent():
  assert scanned.in_text(_AGENT, "var-list-filter") == []


def test_a_library_model_trained_on_its_own_scope_is_silent():
  assert [f for f in scanned.in_project(_LIBRARY)
          if f[0] == "var-list-filter"] == []


def test_a_model_built_beside_a_scope_of_other_features_is_found():
  # The subclass builds features outside its own scope: the filter
  # trains the model on top of them, a part of the graph.
  files = dict(_LIBRARY)
  files["lib/zoo.py"] = files["lib/zoo.py"].replace(
      "    def fprop(self, x):\n",
      "    def fprop(self, x):\n"
      "            with tf.variable_scope('features'):\n"
      "              x = tf.layers.dense(x, 8)\n")
  assert [f[0] for f in scanned.in_project(files)] == ["var-list-filter"]
