"""`tfpartial scan`'s `var-list-filter` over one stage of a network the
function builds whole: two steps of one loss built side by side, one
over fewer of the groups the other joins (part eighteen's skeleton
clusterer: `self.train_finetune` over `self.encoder_vars +
self.classifier_vars` beside `self.train_fixed` over
`self.classifier_vars`), shown at the narrower step; and greedy
layer-wise training (part twenty-five's stacked autoencoder:
`pretrain(layer)` builds `ae1` ... `ae{layer}` through a loop of
`variable_scope('ae{}'.format(i))` and trains only the scope
`'ae{}'.format(layer)`), the last stage trained while the stages below it
feed it, whatever another loss trains after. Each source is synthetic."""

import pytest

import scanned

_SIDE_BY_SIDE = """\
    import tensorflow as tf


    class Seq2Seq(object):

      def __init__(self, inputs, labels, lr):
        with tf.variable_scope("prediction"):
          with tf.variable_scope("encoder"):
            _, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(64), inputs, dtype=tf.float32)
          with tf.variable_scope("decoder"):
            outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(64), inputs, initial_state=state)
        self.loss = tf.reduce_mean(tf.abs(outputs - inputs))
        opt = tf.train.AdamOptimizer(lr)
        gradients, self.pred_vars = zip(*opt.compute_gradients(self.loss))
        clipped, _ = tf.clip_by_global_norm(gradients, 25)
        self.updates = opt.apply_gradients(zip(clipped, self.pred_vars))
        with tf.variable_scope("classifier"):
          logits = tf.layers.dense(state, 10)
        self.cost = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=labels))
        optimizer = tf.train.AdamOptimizer(lr)
        self.encoder_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "prediction/encoder")
        self.classifier_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "classifier")
        self.classification_vars = self.encoder_vars + self.classifier_vars
        self.train_finetune = optimizer.minimize(self.cost, var_list=self.classification_vars)
        self.train_fixed = optimizer.minimize(self.cost, var_list=self.classifier_vars)
    """

# The same two steps written by another team: local names, the narrow
# step first, the join written at the wider step.
_SIDE_BY_SIDE_NAMES = """\
    import tensorflow as tf


    def build(loss, lr):
      head = [v for v in tf.trainable_variables() if v.name.startswith("head")]
      body = [v for v in tf.trainable_variables() if v.name.startswith("body")]
      opt = tf.train.MomentumOptimizer(lr, 0.9)
      head_op = opt.minimize(loss, var_list=head)
      all_op = opt.minimize(loss, var_list=head + body)
      return head_op, all_op
    """


def test_the_narrower_of_two_steps_side_by_side_is_the_finding():
  assert scanned.found(_SIDE_BY_SIDE) == [("var-list-filter", 26)]


def test_the_narrow_step_written_first_is_the_finding():
  assert scanned.found(_SIDE_BY_SIDE_NAMES) == [("var-list-filter", 8)]


def test_side_by_side_steps_over_the_same_groups_stay_at_the_filter():
  # Neither step leaves a group out of the other's: the filter stays the
  # finding's place.
  text = _SIDE_BY_SIDE_NAMES.replace("var_list=head + body)",
                                     "var_list=head)")
  assert scanned.found(text) == [("var-list-filter", 5)]


def test_side_by_side_steps_of_two_losses_stay_silent():
  # A generator's and a discriminator's steps: between them they train
  # every group.
  text = _SIDE_BY_SIDE_NAMES.replace(
      "def build(loss, lr):", "def build(g_loss, d_loss, lr):").replace(
          "minimize(loss, var_list=head)", "minimize(g_loss, var_list=head)"
      ).replace("minimize(loss, var_list=head + body)",
                "minimize(d_loss, var_list=body)")
  assert scanned.found(text) == []


_GREEDY = """\
    import tensorflow as tf


    def stacked(x, num_layers=3, units=(784, 400, 400, 400)):
      reprs = {0: x}
      for i in range(1, num_layers + 1):
        with tf.variable_scope('ae{}'.format(i), reuse=tf.AUTO_REUSE):
          w = tf.get_variable('W', [units[i - 1], units[i]])
          reprs[i] = tf.nn.sigmoid(tf.matmul(reprs[i - 1], w))
      with tf.variable_scope('ae{}'.format(i)):
        w_dec = tf.get_variable('W_dec', [units[i], units[i - 1]])
        return reprs[i - 1], tf.matmul(reprs[i], w_dec)


    def pretrain(layer, sess, batches):
      x = tf.placeholder(tf.float32, [None, 784])
      target, recon = stacked(x, layer)
      loss = tf.reduce_mean(tf.square(target - recon))
      model_variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='ae{}'.format(layer))
      step = tf.train.AdamOptimizer(5e-3).minimize(loss, var_list=model_variables)
      for batch in batches:
        sess.run(step, {x: batch})


    def finetune(sess, batches, labels):
      x = tf.placeholder(tf.float32, [None, 784])
      logits = tf.layers.dense(stacked(x, 3)[0], 10, name='fc')
      loss = tf.losses.softmax_cross_entropy(labels, logits)
      var_list = []
      for i in range(1, 4):
        with tf.variable_scope('ae{}'.format(i), reuse=tf.AUTO_REUSE):
          var_list.append(tf.get_variable('W'))
      var_list.extend(tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='fc'))
      step = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=var_list)
      for batch in batches:
        sess.run(step, {x: batch})


    def main(sess, batches, labels):
      for layer in range(1, 4):
        pretrain(layer, sess, batches)
      finetune(sess, batches, labels)
    """

# The same layer-wise training written by another team: one function
# builds the stack with an f-string scope per block and trains the
# newest block, a later loss fine-tunes every block.
_GREEDY_ONE_FUNCTION = """\
    import tensorflow as tf


    def train_block(k, x, y):
      h = x
      for j in range(k + 1):
        with tf.variable_scope(f"block_{j}", reuse=tf.AUTO_REUSE):
          h = tf.layers.dense(h, 256, activation=tf.nn.relu)
      out = tf.layers.dense(h, 784, name=f"recon_{k}")
      loss = tf.reduce_mean(tf.square(out - x))
      block = tf.trainable_variables(scope=f"block_{k}")
      return tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=block)


    def tune_all(x, y):
      h = x
      for j in range(4):
        with tf.variable_scope(f"block_{j}", reuse=tf.AUTO_REUSE):
          h = tf.layers.dense(h, 256, activation=tf.nn.relu)
      loss = tf.losses.softmax_cross_entropy(y, tf.layers.dense(h, 10, name="head"))
      tuned = tf.trainable_variables(scope="head")
      for j in range(4):
        tuned += tf.trainable_variables(scope=f"block_{j}")
      return tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=tuned)
    """


def test_greedy_layer_wise_pretraining_is_found():
  assert scanned.found(_GREEDY) == [("var-list-filter", 19)]


def test_the_newest_block_of_a_stack_built_in_the_step_s_function_is_found():
  assert scanned.found(_GREEDY_ONE_FUNCTION) == [("var-list-filter", 11)]


@pytest.mark.parametrize("template, stage", [
    ("'ae%d' % i", "'ae%d' % layer"),
    ("'ae' + str(i)", "'ae' + str(layer)"),
    ("f'ae{i}'", "f'ae{layer}'"),
])
def test_the_stage_s_scope_written_other_ways_is_found(template, stage):
  text = _GREEDY.replace("'ae{}'.format(i)", template).replace(
      "'ae{}'.format(layer)", stage)
  assert scanned.found(text) == [("var-list-filter", 19)]


def test_one_scope_per_call_with_no_stack_stays_silent():
  # An ensemble's member: each call opens one scope of its own, trained
  # by its own loss; no member below feeds it.
  text = _GREEDY.replace(
      "  for i in range(1, num_layers + 1):\n", "  for i in [num_layers]:\n")
  assert scanned.found(text) == []


def test_a_stage_template_the_loop_does_not_open_stays_silent():
  # The loop opens `ae{i}`; the step keeps `dec{layer}`, which no loop of
  # the stack opens: no stage of it.
  text = _GREEDY.replace("scope='ae{}'.format(layer)",
                         "scope='dec{}'.format(layer)")
  assert scanned.found(text) == []


def test_a_loop_not_running_to_the_stage_stays_silent():
  # The stack's depth is fixed, not the stage the step trains.
  text = _GREEDY.replace("range(1, num_layers + 1)", "range(1, 4)")
  assert scanned.found(text) == []
