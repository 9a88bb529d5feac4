"""`tfpartial scan` on a helper collecting the scopes it is handed
(`for scope in scopes: get_collection(..., scope)`) where the training
script hands it every root scope its modules open around trainable
variables (`['encoder', 'decoder']`; a moving average's scope of
`trainable=False` copies is none): the lists together are the whole
model, silent. Beside it, the same helper handed the decoder alone:
found."""

import scanned

_FILES = {
    "util/train.py": """\
        import tensorflow as tf

        def get_trainable_variables(scopes):
          is_trainable = lambda x: x in tf.trainable_variables()
          var_list = []
          for scope in scopes:
            raw = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope=scope)
            var_list.extend(list(filter(is_trainable, raw)))
          return var_list
        """,
    "models/model.py": """\
        import tensorflow as tf

        def model_predict(images):
          with tf.variable_scope('encoder'):
            z = tf.layers.dense(images, 64)
          with tf.variable_scope('decoder'):
            return tf.layers.dense(z, 784)

        class Averaged(object):
          def __init__(self, tensors):
            with tf.variable_scope('averaged'):
              self.averages = [tf.get_variable(
                  't%d' % i, t.shape, initializer=tf.zeros_initializer(),
                  trainable=False) for i, t in enumerate(tensors)]
        """,
    "run/train.py": """\
        import tensorflow as tf
        from models import model
        from util.train import get_trainable_variables

        images = tf.placeholder(tf.float32, [None, 784])
        outputs = model.model_predict(images)
        loss = tf.reduce_mean(tf.square(outputs - images))
        train_scopes = ['encoder', 'decoder']
        var_list = get_trainable_variables(train_scopes)
        train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=var_list)
        average = model.Averaged(tf.trainable_variables())
        """,
}


def _lists(files):
  return [f[0] for f in scanned.in_project(files)
          if f[0] == "var-list-filter"]


def test_scopes_covering_every_root_scope_are_silent():
  assert _lists(_FILES) == []


def test_scopes_leaving_out_the_encoder_are_found():
  files = dict(_FILES)
  files["run/train.py"] = files["run/train.py"].replace(
      "['encoder', 'decoder']", "['decoder']")
  assert _lists(files) == ["var-list-filter"]


def test_a_moving_average_trained_too_is_a_root_left_out():
  # The same scope made of trainable variables: a part left out.
  files = dict(_FILES)
  files["models/model.py"] = files["models/model.py"].replace(
      "trainable=False", "trainable=True")
  assert _lists(files) == ["var-list-filter"]
