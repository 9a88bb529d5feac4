"""`tfpartial scan` on a value head trained by an optimizer beside a
policy the program sets by hand: one loop fills `value_params` and
`parameters` (the rest), and `parameters` is handed to a setter of the
project that assigns each variable from a flat vector (LOLA's exact
policy gradients): between them every variable is written, silent.
Beside it, the rest only read (`GetFlat`): the policy stays fixed, found."""

import scanned

_LOLA = {
    "utils.py": """\
        import tensorflow as tf

        class SetFromFlat(object):
          def __init__(self, var_list):
            self.theta = theta = tf.placeholder(tf.float32, [None])
            start, assigns = 0, []
            for v in var_list:
              size = int(v.shape.num_elements())
              assigns.append(tf.assign(v, tf.reshape(
                  theta[start:start + size], v.shape)))
              start += size
            self.op = tf.group(*assigns)

        class GetFlat(object):
          def __init__(self, var_list):
            self.op = tf.concat([tf.reshape(v, [-1]) for v in var_list], 0)
        """,
    "networks.py": """\
        import tensorflow as tf
        from utils import SetFromFlat, GetFlat

        class Qnetwork:
          def __init__(self, scope, x, ret):
            with tf.variable_scope(scope):
              self.log_pi = tf.nn.log_softmax(tf.layers.dense(x, 2))
              self.values = tf.Variable(tf.zeros([5, 1]), name='value_params')
              self.loss = tf.reduce_mean(tf.square(ret - tf.matmul(x, self.values)))
            self.parameters = []
            self.value_params = []
            for i in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                       scope=scope):
              if not ('value_params' in i.name):
                self.parameters.append(i)
              else:
                self.value_params.append(i)
            self.trainer = tf.train.GradientDescentOptimizer(learning_rate=1)
            self.updateModel = self.trainer.minimize(
                self.loss, var_list=self.value_params)
            self.setparams = SetFromFlat(self.parameters)
            self.getparams = GetFlat(self.parameters)
        """,
}


def _lists(files):
  return [f[0] for f in scanned.in_project(files)
          if f[0] == "var-list-filter"]


def test_a_value_head_beside_a_policy_set_by_hand_is_silent():
  assert _lists(_LOLA) == []


def test_a_value_head_beside_a_policy_only_read_is_found():
  files = dict(_LOLA)
  files["networks.py"] = files["networks.py"].replace(
      "SetFromFlat(self.parameters)", "GetFlat(self.parameters)")
  assert _lists(files) == ["var-list-filter"]
