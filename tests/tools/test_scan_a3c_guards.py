"""`tfpartial scan` stays silent on the asynchronous actor-critic (A3C)
workers of part thirty-six's negatives (ViZDoom agents) whose network
class builds the worker's step under a compound test of its scope:
`if scope != 'global' and not play:`. The step is built only for the
scopes that are not the literal, so the literal is the scope of a whole
instance, the global network, whose every variable the workers train.

The real freezes beside them are still found: a worker that applies its
gradients to a part of the global network (its policy head), a test
whose other arm builds the step for the literal too (`==` under `and`),
a head-only fine-tune whose scope list is applied to itself, and a
slim `--trainable_scopes` list. Synthetic sources in the shape of real
code."""

import pytest
import scanned
import test_scan_a3c_workers


_AC = """\
    import tensorflow as tf

    class ACNetwork(object):
      def __init__(self, scope, optimizer, play=False):
        self.__create_network(scope, optimizer, play=play)

      def __create_network(self, scope, optimizer, play=False):
        with tf.variable_scope(scope):
          self.inputs = tf.placeholder(tf.float32, [None, 4])
          net = tf.layers.dense(self.inputs, 64, activation=tf.nn.elu)
          self.policy = tf.layers.dense(net, 2, name='policy')
          self.value = tf.layers.dense(net, 1, name='value')
          if {test}:
            self.loss = tf.reduce_sum(tf.square(self.value)) - tf.reduce_sum(
                self.policy)
            local_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope)
            self.gradients = tf.gradients(self.loss, local_vars)
            grads, self.grad_norms = tf.clip_by_global_norm(
                self.gradients, 40.0)
            global_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, 'global{part}')
            self.apply_grads = optimizer.apply_gradients(
                zip(grads, global_vars))
    """

# The sync op: test_scan_a3c_workers' helper module.
_UTILS = test_scan_a3c_workers._UTILS

_AGENT = """\
    import tensorflow as tf
    import network
    import utils

    class Agent(object):
      def __init__(self, number, optimizer, play=False):
        self.name = 'worker_' + str(number)
        with tf.variable_scope(self.name):
          self.local_AC_network = network.ACNetwork(
              self.name, optimizer, play=play)
        self.update_local_ops = tf.group(
            *utils.update_target_graph('global', self.name))
    """

_MAIN = """\
    import tensorflow as tf
    import agent
    import network

    optimizer = tf.train.RMSPropOptimizer(7e-4, 0.99, 0.0, 1e-6)
    global_network = network.ACNetwork('global', optimizer)
    agents = [agent.Agent(i, optimizer) for i in range(4)]
    """


@pytest.mark.parametrize("test, part, expected", [
    # The step is built only for a scope that is not 'global' (and not
    # when playing): the global instance is whole, every variable trains.
    ("scope != 'global' and not play", "", []),
    ("not play and 'global' != scope", "", []),
    # `or` of the equality: the other arm... written as its negation.
    ("not (scope == 'global' or play)", "", []),
    # Only the global policy head trains: a part of the global network.
    ("scope != 'global' and not play", "/policy",
     [("var-list-filter", "network.py", 21)]),
    # `==` under `and`: the step is also built for 'global' itself
    # (when not playing); the literal names no guarded instance.
    ("not (scope == 'global' and play)", "",
     [("var-list-filter", "network.py", 21)]),
    # `or` lets 'global' build its step too (when training it, or when
    # playing): the literal names no guarded instance.
    ("scope != 'global' or train_global", "",
     [("var-list-filter", "network.py", 21)]),
    ("scope == 'global' or play", "",
     [("var-list-filter", "network.py", 21)]),
    ("scope == 'global' or play", "/policy",
     [("var-list-filter", "network.py", 21)]),
], ids=["and_not_play", "literal_first", "negated_or", "policy_head_only",
        "negated_and_of_equality", "or_train_global", "or_play",
        "or_play_policy_head"])
def test_worker_step_under_a_compound_scope_test(test, part, expected):
  files = {"network.py": _AC.format(test=test, part=part),
           "utils.py": _UTILS, "agent.py": _AGENT, "main.py": _MAIN}
  assert scanned.in_project(files) == expected


# A head-only fine-tune whose scope list is applied to itself; a slim
# `--trainable_scopes` list: real freezes, found.
_HEAD = """\
    import tensorflow as tf

    def build(x, y, play=False):
      with tf.variable_scope('body'):
        h = tf.layers.dense(x, 8)
      with tf.variable_scope('head'):
        out = tf.layers.dense(h, 1)
      if not play:
        loss = tf.reduce_mean(tf.square(out - y))
        head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'head')
        grads = tf.gradients(loss, head)
        return tf.train.AdamOptimizer(1e-3).apply_gradients(zip(grads, head))
    """

_SLIM = """\
    import tensorflow as tf
    slim = tf.contrib.slim
    FLAGS = tf.app.flags.FLAGS

    def _get_variables_to_train():
      if FLAGS.trainable_scopes is None:
        return tf.trainable_variables()
      scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
      variables_to_train = []
      for scope in scopes:
        variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
        variables_to_train.extend(variables)
      return variables_to_train

    def main(loss):
      optimizer = tf.train.AdamOptimizer(1e-3)
      return slim.learning.create_train_op(
          loss, optimizer, variables_to_train=_get_variables_to_train())
    """


@pytest.mark.parametrize("code, expected", [
    (_HEAD, [("var-list-filter", 10)]),
    (_SLIM, [("var-list-filter", 11)]),
], ids=["head_fine_tune", "slim_trainable_scopes"])
def test_real_freezes_beside_the_workers_are_found(code, expected):
  assert scanned.found(code) == expected


# A network class that opens no scope but names every layer under its
# own scope attribute (`scope=self._name_scope + "/fc1"`), one instance
# per thread; the workers take gradients over their instance's
# collection and apply them to the global instance's (deep_rl_vizdoom;
# the learner reaches the class by name, `getattr(networks, ...)`).
_NETS = """\
    import tensorflow as tf
    from tensorflow.contrib.layers import fully_connected, linear

    class ACNet(object):
      def __init__(self, actions_num, thread="global"):
        self._name_scope = "net_" + str(thread)
        self.state = tf.placeholder(tf.float32, [None, 8])
        fc1 = fully_connected(self.state, num_outputs=64,
                              scope=self._name_scope + "/fc1")
        pi = fully_connected(fc1, num_outputs=actions_num,
                             scope={pi_scope}, activation_fn=tf.nn.softmax)
        v = linear(fc1, num_outputs=1, scope=self._name_scope + "/fc_value")
        self.loss = -tf.reduce_sum(tf.log(pi)) + tf.reduce_sum(v ** 2)
        self.params = tf.get_collection(
            tf.GraphKeys.GLOBAL_VARIABLES, scope={kept})

      def get_params(self):
        return self.params

      def prepare_sync_op(self, global_network):
        sync = [d.assign(s) for d, s in zip(
            self.get_params(), global_network.get_params())]
        self.sync = tf.group(*sync)
    """

_LEARNER = """\
    import tensorflow as tf
    import networks

    class A3CLearner(object):
      def __init__(self, network_class, thread_index, global_network,
                   optimizer):
        self.local_network = getattr(networks, network_class)(
            4, thread=thread_index)
        grads_and_vars = optimizer.compute_gradients(
            self.local_network.loss, var_list=self.local_network.get_params())
        grads, local_vars = zip(*grads_and_vars)
        self.train_op = optimizer.apply_gradients(
            zip(grads, global_network.get_params()))
        self.local_network.prepare_sync_op(global_network)

    def train(threads):
      optimizer = tf.train.RMSPropOptimizer(7e-4)
      global_network = networks.ACNet(4)
      return [A3CLearner("ACNet", i, global_network, optimizer)
              for i in range(threads)]
    """


@pytest.mark.parametrize("pi_scope, kept, expected", [
    # Every layer is named under the instance's scope: the collection of
    # that scope is the whole network, local and global alike.
    ('self._name_scope + "/fc_pi"', "self._name_scope", []),
    # The policy layer is made outside the instance's scope: the
    # collection leaves it out, it never trains.
    ('"fc_pi"', "self._name_scope", [("var-list-filter", "networks.py", 14)]),
    # Only the value layer's collection: the body and policy never train.
    ('self._name_scope + "/fc_pi"', 'self._name_scope + "/fc_value"',
     [("var-list-filter", "networks.py", 14)]),
], ids=["every_layer_named_under_the_scope", "policy_made_outside",
        "value_layer_only"])
def test_worker_collects_the_scope_its_class_names_every_layer_under(
    pi_scope, kept, expected):
  files = {"networks.py": _NETS.format(pi_scope=pi_scope, kept=kept),
           "learner.py": _LEARNER}
  assert scanned.in_project(files) == expected
