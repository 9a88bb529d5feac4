"""`tfpartial scan` stays silent on look-alikes that part nineteen's
negative codebases showed: a list chosen by a name test and its
complement (`[v for v in tvars if v not in chosen]`), each minimised for
the same loss, whose two ops every block of the loop runs together
(between them every variable trains at every step); a network object's
trainables, collected from the scope its class builds under (the
project's helper reopening that scope, a root name scope for summaries).
The twin whose loop runs only one of the two ops leaves the other list
untrained and is still found; so is a network whose class also builds
under another scope. Synthetic sources in the shape of real code."""

import pytest
import scanned


_found = scanned.found


# A grid of sampling offsets trained beside the convolutions: the grid's
# variables by a name test, the rest as what is not the grid; both ops
# fetched in one run, or one run after the other when summaries are
# fetched too.
_COMPLEMENT = """\
    import re
    import tensorflow as tf

    with tf.Graph().as_default():
      X = tf.placeholder(tf.float32, [None, 32, 32, 3])
      Y = tf.placeholder(tf.float32, [None, 10])
      logits = model(X)
      loss = tf.reduce_mean(
          tf.nn.softmax_cross_entropy_with_logits(labels=Y, logits=logits))
      grid_weights = []
      for v in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES):
        if re.search('GRID', v.name):
          grid_weights.append(v)
      convbn_weights = [v for v in tf.get_collection(
          tf.GraphKeys.TRAINABLE_VARIABLES) if v not in grid_weights]
      opt_conv = tf.train.MomentumOptimizer(0.1, momentum=0.9)
      opt_grid = tf.train.MomentumOptimizer(0.5, momentum=0.9)
      train_op_conv = opt_conv.minimize(loss, var_list=convbn_weights)
      train_op_grid = opt_grid.minimize(loss, var_list=grid_weights)
      with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(1000):
          xs, ys = next_batch()
          if i % 100 == 0:
            _, cost = sess.run([{first}, loss], feed_dict={{X: xs, Y: ys}})
            print(cost)
            sess.run({second}, feed_dict={{X: xs, Y: ys}})
          else:
            sess.run({rest}, feed_dict={{X: xs, Y: ys}})
    """


@pytest.mark.parametrize("source, expected", [
    # Both ops at every step: every variable trains.
    (_COMPLEMENT.format(first="train_op_conv", second="train_op_grid",
                        rest="[train_op_conv, train_op_grid]"), []),
    (_COMPLEMENT.format(first="train_op_grid", second="train_op_conv",
                        rest="train_op_conv)\n            sess.run(train_op_grid"),
     []),
    # Only the convolutions' op runs: the grid stays as initialised.
    (_COMPLEMENT.format(first="train_op_conv", second="loss",
                        rest="train_op_conv"), [("var-list-filter", 13)]),
    # Only the grid's op runs in the loop's usual block.
    (_COMPLEMENT.format(first="train_op_conv", second="train_op_grid",
                        rest="train_op_grid"), [("var-list-filter", 13)]),
])
def test_a_list_and_its_complement_run_together(source, expected):
  assert _found(source) == expected


# A StyleGAN-style network object: its variables built under its own
# scope, its trainables collected from it; a moving average built under
# the project's helper reopening that scope, histograms at the root.
_NETWORK = """\
    import tensorflow as tf
    from collections import OrderedDict

    def absolute_name_scope(scope):
      return tf.name_scope(scope + '/')

    class Network:
      def __init__(self, name, build_func):
        self.name, self._build_func = name, build_func
        self._init_graph()

      def _init_graph(self):
        self.scope = tf.get_default_graph().unique_name(self.name)
        with tf.variable_scope(self.scope, reuse=tf.AUTO_REUSE):
          self.output = self._build_func(tf.placeholder(tf.float32))
        {extra}
        self.trainables = OrderedDict(
            (v.name, v) for v in tf.trainable_variables(self.scope + '/'))

      def setup_as_moving_average_of(self, src_net, beta=0.99):
        with absolute_name_scope(self.scope):
          with tf.name_scope('MovingAvg'):
            return tf.group(*[v.assign(src_net.trainables[n])
                              for n, v in self.trainables.items()])

      def setup_weight_histograms(self):
        with tf.name_scope(None), tf.device(None):
          for name, var in self.trainables.items():
            tf.summary.histogram(name, var)

    class Optimizer:
      def __init__(self, learning_rate):
        self.opt = tf.train.AdamOptimizer(learning_rate)
        self.grads = []

      def register_gradients(self, loss, trainable_vars):
        trainable_vars = list(trainable_vars.values())
        self.grads.append(self.opt.compute_gradients(
            loss=loss, var_list=trainable_vars))

    def train(build, reals):
      N = Network('N', build)
      N_opt = Optimizer(0.001)
      N_loss = tf.reduce_mean(tf.square(N.output - reals))
      N_opt.register_gradients(N_loss, N.trainables)
    """


@pytest.mark.parametrize("source, expected", [
    (_NETWORK.format(extra="pass"), []),
    # The class also builds a head under a scope of its own.
    (_NETWORK.format(extra="with tf.variable_scope('head'):\n"
                           "          self.head = tf.get_variable('w', [1])"),
     [("var-list-filter", 19)]),
])
def test_a_network_s_trainables_of_its_own_scope(source, expected):
  assert _found(source) == expected
