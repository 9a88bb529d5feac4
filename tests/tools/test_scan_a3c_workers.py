"""`tfpartial scan` stays silent on asynchronous actor-critic (A3C)
workers that part twenty-nine's negative codebases showed.

Each worker thread builds a local copy of the network, takes gradients
of its local loss with respect to the local variables and applies them
to the global network's variables, then copies the global values back
(a sync op). Every global variable trains; nothing is frozen.

- The network class opens the scope it is handed and tests it against
  `'global'` (`if scope != 'global':` builds the worker's step): the
  literal is the scope of a whole instance of the class, even when the
  instance is built in a module that reaches the class by `import *`.
- The worker keeps the global variables whose names match the
  gradients it applies (`[x for x in global_network.get_vars() if
  name(x) in grad_names]`, the names made from those gradients): the
  list pairs each gradient with its variable, it chooses none.

Their twins that apply the gradients to a part of the global network
(a head's scope, a filter by a literal name) are still found, and so
are the look-alikes the scanner already judged (a GAN's two halves and
a target network stay silent). Synthetic sources in the shape of real
code."""

import pytest
import scanned


_AC = """\
    import tensorflow as tf
    from utils import *

    class AC():
      def __init__(self, s_size, a_size, scope, trainer):
        with tf.variable_scope(scope):
          self.inputs = tf.placeholder(tf.float32, [None, s_size])
          net = tf.layers.dense(self.inputs, 64, activation=tf.nn.elu)
          self.policy = tf.layers.dense(net, a_size, name='policy')
          self.value = tf.layers.dense(net, 1, name='value')
          if scope != 'global':
            self.loss = tf.reduce_sum(tf.square(self.value)) - tf.reduce_sum(
                self.policy)
            local_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope)
            self.gradients = tf.gradients(self.loss, local_vars)
            grads, self.grad_norms = tf.clip_by_global_norm(
                self.gradients, 40.0)
            global_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, 'global{part}')
            self.apply_grads = trainer.apply_gradients(zip(grads, global_vars))

    class Worker():
      def __init__(self, name, trainer):
        self.name = 'worker_' + str(name)
        self.local_AC = AC(4, 2, self.name, trainer)
        self.update_local_ops = update_target_graph('global', self.name)
    """

# The sync op, a helper of another module (`from utils import *`).
_UTILS = """\
    import tensorflow as tf

    def update_target_graph(from_scope, to_scope):
      from_params = tf.get_collection(
          tf.GraphKeys.TRAINABLE_VARIABLES, from_scope)
      to_params = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, to_scope)
      return [t.assign(f) for f, t in zip(from_params, to_params)]
    """

_MAIN_STAR = """\
    import tensorflow as tf
    from a3c import *

    trainer = tf.train.AdamOptimizer(learning_rate=2e-4, use_locking=True)
    master_network = AC(4, 2, 'global', None)
    workers = [Worker(i, trainer) for i in range(4)]
    """


@pytest.mark.parametrize("part, main, expected", [
    # The global instance built through `from a3c import *`.
    ("", _MAIN_STAR, []),
    # No module builds it at all: the class's own test names it.
    ("", "import a3c\n", []),
    # Only the global policy head trains: a part of the global network.
    ("/policy", _MAIN_STAR, [("var-list-filter", "a3c.py", 19)]),
], ids=["star_import", "built_nowhere", "policy_head_only"])
def test_worker_applies_to_the_global_scope_its_class_tests(
    part, main, expected):
  files = {"a3c.py": _AC.format(part=part), "utils.py": _UTILS,
           "main.py": main}
  assert scanned.in_project(files) == expected


_THREAD = """\
    import tensorflow as tf

    class AccumTrainer(object):
      def prepare_minimize(self, loss, var_list):
        self._var_list = var_list
        self._grad_list = tf.gradients(loss, var_list)
        self._accum_grad_list = [
            tf.Variable(tf.zeros_like(v), trainable=False,
                        name=v.op.name.replace(':', '_') + '_accum_grad')
            for v in var_list]

      def get_accum_grad_list(self):
        return self._accum_grad_list

    class TrainingThread(object):
      def __init__(self, global_network, local_network, grad_applier):
        self.local_network = local_network
        self.trainer = AccumTrainer()
        self.trainer.prepare_minimize(self.local_network.total_loss,
                                      self.local_network.get_vars())
        accum_grad_names = [self._local_var_name(x)
                            for x in self.trainer.get_accum_grad_list()]
        global_net_vars = [x for x in global_network.get_vars()
                           if {condition}]
        self.apply_gradients = grad_applier.apply_gradients(
            global_net_vars, self.trainer.get_accum_grad_list())
        self.sync = self.local_network.sync_from(global_network)

      def _local_var_name(self, var):
        return '/'.join(var.name.split('/')[1:])

      def _get_accum_grad_name(self, var):
        return self._local_var_name(var).replace(':', '_') + '_accum_grad:0'
    """

# The networks, the applier (a hand-made RMSProp) and the threads.
_NETWORK = """\
    import tensorflow as tf

    class Network(object):
      def __init__(self, scope):
        with tf.variable_scope(scope):
          self.W = tf.Variable(tf.zeros([4, 4]))
          self.b = tf.Variable(tf.zeros([4]))
          self.total_loss = tf.reduce_sum(self.W) + tf.reduce_sum(self.b)

      def get_vars(self):
        return [self.W, self.b]

      def sync_from(self, src):
        return tf.group(*[d.assign(s) for s, d in zip(
            src.get_vars(), self.get_vars())])
    """

_APPLIER = """\
    import tensorflow as tf
    from tensorflow.python.training import training_ops

    class RMSPropApplier(object):
      def __init__(self, learning_rate):
        self._learning_rate = learning_rate

      def apply_gradients(self, var_list, accum_grad_list):
        update_ops = []
        for var, accum_grad in zip(var_list, accum_grad_list):
          update_ops.append(training_ops.apply_gradient_descent(
              var, self._learning_rate, accum_grad).op)
        return tf.group(*update_ops)
    """

_TRAIN = """\
    from network import Network
    from thread import TrainingThread
    from applier import RMSPropApplier

    global_network = Network('global')
    grad_applier = RMSPropApplier(learning_rate=0.1)
    threads = [TrainingThread(global_network, Network('thread_%d' % i),
                              grad_applier) for i in range(4)]
    """


@pytest.mark.parametrize("condition, expected", [
    # Each gradient's own variable, matched by name: every one applied.
    ("self._get_accum_grad_name(x) in accum_grad_names", []),
    # A literal name picks the policy layer of the global network: a part.
    ("'policy' in x.name", [("var-list-filter", "thread.py", 23)]),
], ids=["matched_to_the_gradients", "policy_layer_only"])
def test_worker_keeps_the_global_variables_its_gradients_name(
    condition, expected):
  files = {"thread.py": _THREAD.format(condition=condition),
           "network.py": _NETWORK, "applier.py": _APPLIER, "train.py": _TRAIN}
  assert scanned.in_project(files) == expected


# Look-alikes already judged; kept beside the A3C forms so a rule that
# reads "gradients of one list applied to another" never finds them.
_GAN = """\
    import tensorflow as tf

    def build(real, noise):
      with tf.variable_scope('generator'):
        fake = tf.layers.dense(noise, 4)
      with tf.variable_scope('discriminator'):
        d_real = tf.layers.dense(real, 1)
      with tf.variable_scope('discriminator', reuse=True):
        d_fake = tf.layers.dense(fake, 1)
      g_loss = -tf.reduce_mean(d_fake)
      d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
      g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'generator')
      d_vars = tf.get_collection(
          tf.GraphKeys.TRAINABLE_VARIABLES, 'discriminator')
      g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
      d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
      return g_op, d_op
    """

_TARGET = """\
    import tensorflow as tf

    def build(state):
      with tf.variable_scope('online'):
        q = tf.layers.dense(state, 4)
      with tf.variable_scope('target'):
        q_next = tf.layers.dense(state, 4)
      online = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'online')
      target = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'target')
      loss = tf.reduce_mean(tf.square(q - tf.stop_gradient(q_next)))
      grads = tf.gradients(loss, online)
      train = tf.train.AdamOptimizer(1e-4).apply_gradients(zip(grads, online))
      sync = [t.assign(o) for o, t in zip(online, target)]
      return train, sync
    """


@pytest.mark.parametrize("code", [_GAN, _TARGET], ids=["gan", "target"])
def test_look_alikes_stay_silent(code):
  assert scanned.in_project({"m.py": code}) == []


# The same pair built by a helper function that tests the scope with
# `==` and builds the worker's step in the other arm.
_HELPER = """\
    import tensorflow as tf

    def build_net(state, scope, opt):
      with tf.variable_scope(scope):
        hidden = tf.layers.dense(state, 32, name='hidden')
        value = tf.layers.dense(hidden, 1, name='value')
        if scope == 'master':
          return value, None
        else:
          loss = tf.reduce_mean(tf.square(value))
          local = tf.trainable_variables(scope)
          grads = tf.gradients(loss, local)
          shared = [v for v in tf.trainable_variables() if
                    v.name.startswith('{prefix}')]
          return value, opt.apply_gradients(zip(grads, shared))
    """


@pytest.mark.parametrize("prefix, expected", [
    ("master", []),
    # The master's value head alone trains: a part.
    ("master/value", [("var-list-filter", "net.py", 13)]),
], ids=["whole_master", "value_head_only"])
def test_helper_builds_the_worker_step_for_other_scopes(prefix, expected):
  files = {"net.py": _HELPER.format(prefix=prefix)}
  assert scanned.in_project(files) == expected
