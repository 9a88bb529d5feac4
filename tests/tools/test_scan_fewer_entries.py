"""`tfpartial scan`: the variables a step trains written out from one
dict in the two arms of an `if`, one arm's entries some of the other's
(PyMDNet's `optimize(branch=None)`: the online tracker trains `fc4`,
`fc5` of `self.weights` where pretraining trains `conv1`..`fc5`): the
short arm leaves out layers the class builds, a `var-list-filter`. And
the look-alikes: entries the short arm's case never builds (a bias made
only `if use_bias:`), two arms naming different layers (a GAN's
halves), one list for every case."""

import scanned

_MDNET = """\
    import tensorflow as tf

    class MDNet(object):
      def __init__(self):
        self.weights = {}
        self.losses = {}

      def conv(self, name, shape):
        self.weights[name] = tf.get_variable(name, shape)
        return self

      def build_trainer(self, K):
        self.conv('conv1', [7, 7, 3, 96]).conv('fc4', [3, 3, 96, 512])
        self.conv('fc5', [1, 1, 512, 512])
        for i in range(K):
          self.optimize(i)

      def build_generator(self):
        self.conv('conv1', [7, 7, 3, 96]).conv('fc4', [3, 3, 96, 512])
        self.conv('fc5', [1, 1, 512, 512])
        self.optimize()

      def optimize(self, branch=None):
        if branch is None:
          conv_weights = [self.weights['fc4'],
                          self.weights['fc5']]
        else:
          conv_weights = [self.weights['conv1'],
                          self.weights['fc4'],
                          self.weights['fc5']]
        loss = self.losses[str(branch)]
        grads = tf.gradients(loss, conv_weights)
        opt = tf.train.MomentumOptimizer(0.001, 0.9)
        self.train_op = opt.apply_gradients(zip(grads, conv_weights))
    """


def test_the_tracker_trains_some_of_the_pretrained_layers():
  assert scanned.found(_MDNET) == [("var-list-filter", 25)]


def test_the_same_entries_in_both_arms_are_silent():
  same = _MDNET.replace("""\
          conv_weights = [self.weights['fc4'],
                          self.weights['fc5']]""", """\
          conv_weights = [self.weights['conv1'],
                          self.weights['fc4'],
                          self.weights['fc5']]""")
  assert scanned.found(same) == []


def test_a_bias_built_only_in_the_other_case_is_silent():
  code = """\
      import tensorflow as tf

      class Dense(object):
        def __init__(self, use_bias=True):
          self.params = {}
          self.params['w'] = tf.get_variable('w', [4, 4])
          if use_bias:
            self.params['b'] = tf.get_variable('b', [4])
          self.use_bias = use_bias

        def step(self, loss):
          if self.use_bias:
            params = [self.params['w'], self.params['b']]
          else:
            params = [self.params['w']]
          grads = tf.gradients(loss, params)
          return tf.train.AdamOptimizer().apply_gradients(zip(grads, params))
      """
  assert scanned.found(code) == []


def test_a_gans_two_halves_in_two_arms_are_silent():
  code = """\
      import tensorflow as tf

      class Gan(object):
        def __init__(self):
          self.w = {}
          for name in ('g1', 'g2', 'd1', 'd2'):
            self.w[name] = tf.get_variable(name, [4, 4])

        def step(self, loss, half):
          if half == 'g':
            params = [self.w['g1'], self.w['g2']]
          else:
            params = [self.w['d1'], self.w['d2']]
          grads = tf.gradients(loss, params)
          return tf.train.AdamOptimizer().apply_gradients(zip(grads, params))
      """
  assert scanned.found(code) == []


# PyMDNet as written: weights and biases each at their own optimizer,
# the last layer picked in an `if` of its own.
_LAYERWISE = _MDNET.replace("""\
        loss = self.losses[str(branch)]
        grads = tf.gradients(loss, conv_weights)
        opt = tf.train.MomentumOptimizer(0.001, 0.9)
        self.train_op = opt.apply_gradients(zip(grads, conv_weights))
    """, """\
        if branch is None:
          last_weight = [self.weights['fc6']]
        else:
          last_weight = [self.weights['fc6-' + str(branch)]]
        loss = self.losses[str(branch)]
        grads = tf.gradients(loss, conv_weights + last_weight)
        opt1 = tf.train.MomentumOptimizer(0.001, 0.9)
        opt2 = tf.train.MomentumOptimizer(0.01, 0.9)
        n = len(conv_weights)
        op1 = opt1.apply_gradients(zip(grads[:n], conv_weights))
        op2 = opt2.apply_gradients(zip(grads[n:], last_weight))
        self.train_op = tf.group(op1, op2)
    """)


def test_layers_at_their_own_rates_leave_out_the_pretrained_ones():
  assert scanned.found(_LAYERWISE) == [("var-list-filter", 25)]


def test_a_left_out_layer_trained_by_another_group_is_silent():
  # The tracker trains `conv1` too, at a rate of its own.
  code = _LAYERWISE.replace("""\
        if branch is None:
          last_weight = [self.weights['fc6']]""", """\
        if branch is None:
          last_weight = [self.weights['fc6'], self.weights['conv1']]""")
  # (What the computed key `'fc6-' + str(branch)` says is another rule's.)
  assert ("var-list-filter", 25) not in scanned.found(code)
