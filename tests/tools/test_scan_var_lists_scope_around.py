"""`tfpartial scan` on a `var_list` filtered by an object's scope
attribute where the object is made inside that scope: every caller opens
the scope it hands the object (`with tf.variable_scope(scope): model =
CVAE(..., scope=scope)`), or a decorator opens the object's own scope
around every method that builds (`with tf.variable_scope(self.vs)`).
The filter keeps the whole object. Beside each, a twin whose scope names
one part of the model: found."""

import scanned

_HANDED = {
    "models/cvae.py": """\
        import tensorflow as tf

        class Base:
          def optimize(self, loss):
            if self.scope is None:
              tvars = tf.trainable_variables()
            else:
              tvars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                        scope=self.scope)
            grads = tf.gradients(loss, tvars)
            self.train_op = tf.train.AdamOptimizer(1e-3).apply_gradients(
                zip(grads, tvars))

        class CVAE(Base):
          def __init__(self, x, scope=None):
            self.scope = scope
            with tf.variable_scope("encoder"):
              h = tf.layers.dense(x, 8)
            with tf.variable_scope("decoder"):
              y = tf.layers.dense(h, 4)
            self.optimize(tf.reduce_mean(y))
        """,
    "train.py": """\
        import tensorflow as tf
        from models.cvae import CVAE

        scope = "model"
        with tf.variable_scope(scope, reuse=None):
          model = CVAE(x, scope=scope)
        with tf.variable_scope(scope, reuse=True):
          valid_model = CVAE(x, scope=scope)
        """,
}

_DECORATED = """\
    import tensorflow as tf

    def in_own_scope(func):
      def wrapper(*args, **kwargs):
        self = args[0]
        with tf.variable_scope(self.vs):
          return func(*args, **kwargs)
      return wrapper

    class Graph:
      def __init__(self, name):
        self.vs_name = name
        with tf.variable_scope(name) as vs:
          self.vs = vs

      @in_own_scope
      def add_net(self, x):
        with tf.variable_scope("Encoder"):
          h = tf.layers.dense(x, 8)
        with tf.variable_scope("Decoder"):
          self.loss = tf.reduce_mean(tf.layers.dense(h, 2))

      @in_own_scope
      def add_train(self):
        params = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                   scope=self.vs_name)
        grads = tf.gradients(self.loss, params)
        self.update = tf.train.AdamOptimizer(1e-3).apply_gradients(
            zip(grads, params))
    """


def _lists(files):
  return [f[0] for f in scanned.in_project(files)
          if f[0] == "var-list-filter"]


def test_a_model_made_inside_the_scope_it_is_handed_is_silent():
  assert _lists(_HANDED) == []


def test_a_model_handed_the_scope_of_one_part_is_found():
  # Made inside "model" but handed "model/decoder": the encoder stays.
  files = dict(_HANDED)
  files["train.py"] = files["train.py"].replace(
      "scope=scope)", "scope=scope + '/decoder')")
  assert _lists(files) == ["var-list-filter"]


def test_a_model_made_outside_the_scope_it_is_handed_is_found():
  files = dict(_HANDED)
  files["train.py"] = files["train.py"].replace(
      "with tf.variable_scope(scope, reuse=None):",
      "with tf.variable_scope('pretrained', reuse=None):")
  assert _lists(files) == ["var-list-filter"]


def test_methods_built_inside_a_decorator_opening_the_own_scope_are_silent():
  assert scanned.in_text(_DECORATED, "var-list-filter") == []


def test_a_decorator_opening_another_scope_is_found():
  # The decorator opens a fixed scope: the nets build outside `vs_name`.
  text = _DECORATED.replace("tf.variable_scope(self.vs)",
                            "tf.variable_scope('graph')")
  assert [f[0] for f in scanned.in_text(text, "var-list-filter")] == [
      "var-list-filter"]
