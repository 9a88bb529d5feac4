"""`tfpartial scan` after the review of t51-fpb and t51-fpa (fr38e):
the look-alikes of the new silencers stay found. A slice of
`zip(*tower_grads)` keeps some variables; a `tf.cond` on a constant flag
trains one side only; a per-element choice decided by a flag, or run by
slice, freezes; a split joined only for a summary is still a filter; a
variable taken back by position may not be the one dropped."""

import scanned
import test_scan_whole_splits as whole_splits

_ZIP2 = """\
    import tensorflow as tf

    def train(opt, losses):
      tower_grads = []
      for i, loss in enumerate(losses):
        with tf.device('/gpu:%d' % i):
          tower_grads.append(opt.compute_gradients(loss))
      per_var = list(zip(*tower_grads))[:-2]
      avg = [(tf.add_n([g for g, _ in gv]) / len(gv), gv[0][1]) for gv in per_var]
      return opt.apply_gradients(avg)
"""


def test_a_slice_of_per_variable_tower_pairs_is_found():
  assert scanned.found(_ZIP2) == [('var-list-filter', 8)]

_GAN = whole_splits.gan("tf.constant(FLAGS.discriminator_only)", flags=True)


def test_a_cond_on_a_constant_flag_is_found():
  assert scanned.found(_GAN) == [('var-list-filter', 28), ('var-list-filter', 29)]

_PE2 = """\
    import tensorflow as tf
    FLAGS = tf.app.flags.FLAGS
    def build(losses):
      opt = tf.train.AdamOptimizer(1e-3)
      head = [v for v in tf.trainable_variables() if 'head' in v.name]
      ops = [opt.minimize(loss, var_list=head) if FLAGS.head_only or i < 0 else opt.minimize(loss) for i, loss in enumerate(losses)]
      return ops
"""


def test_a_per_element_test_decided_by_a_flag_is_found():
  assert scanned.found(_PE2) == [('var-list-filter', 5)]

_PE3 = """\
    import tensorflow as tf
    def build(losses, sess, steps):
      opt = tf.train.AdamOptimizer(1e-3)
      head = [v for v in tf.trainable_variables() if 'head' in v.name]
      ops = [opt.minimize(loss, var_list=head) if i != 0 else opt.minimize(loss) for i, loss in enumerate(losses)]
      sess.run(ops[0])
      for _ in range(steps):
        sess.run(ops[1:])
"""


def test_per_element_steps_run_by_slice_are_found():
  assert scanned.found(_PE3) == [('var-list-filter', 4)]

_REJ = """\
    import tensorflow as tf
    def build(loss, opt, frozen_names):
      grads_and_vars = opt.compute_gradients(loss)
      train, frozen, norms = [], [], []
      for gv in grads_and_vars:
        if gv[1].name in frozen_names:
          frozen.append(gv)
        else:
          train.append(gv)
      for g, v in train:
        norms.append(tf.norm(g))
      for g, v in frozen:
        norms.append(tf.norm(g))
      tf.summary.scalar("grad_norm", tf.add_n(norms))
      return opt.apply_gradients(train)
"""


def test_a_split_joined_only_for_a_summary_is_found():
  assert scanned.found(_REJ) == [('var-list-filter', 9)]

_DROP2 = """\
    import tensorflow as tf

    class Model:
      def build(self, x, y):
        self.weights = self._init_weights()
        out = tf.matmul(x, self.weights["dense"]) + self.weights["bias"]
        self.loss = tf.losses.log_loss(y, tf.nn.sigmoid(out))
        self.var1 = [v for v in tf.trainable_variables()
                     if v.name != 'feature_bias:0']
        self.var2 = [tf.trainable_variables()[5]]
        if self.optimizer_type == "adam":
          if self.has_wide:
            opt1 = tf.train.AdamOptimizer(0.01)
            opt2 = tf.train.GradientDescentOptimizer(0.1)
            var_list1 = self.var1
            var_list2 = self.var2
            grads = tf.gradients(self.loss, var_list1 + var_list2)
            grads1 = grads[:len(var_list1)]
            grads2 = grads[len(var_list1):]
            op1 = opt1.apply_gradients(zip(grads1, var_list1))
            op2 = opt2.apply_gradients(zip(grads2, var_list2))
            self.train_op = tf.group(op1, op2)

          else:
            self.train_op = tf.train.AdamOptimizer(0.01).minimize(self.loss)
        else:
          self.train_op = tf.train.AdagradOptimizer(0.01).minimize(self.loss)
"""


def test_a_variable_taken_back_by_an_unknown_position_is_found():
  assert scanned.found(_DROP2) == [('var-list-filter', 8)]

_GAN0 = whole_splits.gan()


def test_a_cond_on_the_step_counter_stays_silent():
  assert scanned.found(_GAN0) == []


_PE_LOOP = """\
    import tensorflow as tf
    def train(losses, sess, styles):
      opt = tf.train.AdamOptimizer(1e-3)
      head = [v for v in tf.trainable_variables() if 'head' in v.name]
      ops = [opt.minimize(loss, var_list=head) if i != 0 else
             opt.minimize(loss) for i, loss in enumerate(losses)]
      for style_i in range(len(styles)):
        sess.run(ops[style_i])
"""


def test_per_element_steps_run_in_turn_by_a_range_loop_are_silent():
  assert scanned.found(_PE_LOOP) == []


def test_per_element_steps_run_by_a_flag_index_are_found():
  code = _PE_LOOP.replace("for style_i in range(len(styles)):",
                          "for style_i in FLAGS.styles:")
  assert scanned.found(code) == [("var-list-filter", 4)]
