"""`tfpartial scan`'s `var-list-filter` on two filtered lists of one loss
whose steps an ordered test of the epoch runs each in its own part of
the run (part thirty-four's HATM: for four epochs only the new prompt
attention trains, then a wider list, both through a project helper that
hands `variables_to_train` to slim's `create_train_op`; the response
encoder, the attention and the grader, restored from a pretrained model,
never train). Each list is its own finding. Silent twins: the same two
lists trained side by side in one iteration (two learning rates), or
alternating by the step's parity (a GAN's halves), and a discriminator
warmed up alone before the two halves alternate."""

import scanned

_UTIL = """
import tensorflow as tf
import tensorflow.contrib.slim as slim


def create_train_op(total_loss, learning_rate, optimizer, variables_to_train=None):
    return slim.learning.create_train_op(
        total_loss=total_loss, optimizer=optimizer(learning_rate),
        variables_to_train=variables_to_train)
"""

_MODEL = """
import tensorflow as tf
import util


class Model(object):
    def fit(self, loss, n_epochs, n_batches):
        variables1 = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope='.*((PROMPT_ATN)|(RNN_KEY)).*')
        variables2 = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope='.*((PROMPT_ATN)|(RNN_KEY)|(Grader)).*')
        train_op_new = util.create_train_op(total_loss=loss, learning_rate=1e-3,
                                            optimizer=tf.train.AdamOptimizer,
                                            variables_to_train=variables1)
        train_op_all = util.create_train_op(total_loss=loss, learning_rate=1e-3,
                                            optimizer=tf.train.AdamOptimizer,
                                            variables_to_train=variables2)
        for epoch in range(n_epochs):
            for batch in range(n_batches):
"""

_PHASES = """\
                if epoch <= 4:
                    self.sess.run(train_op_new)
                else:
                    self.sess.run(train_op_all)
"""


def _found(model):
  return [(idiom, path, line) for idiom, path, line
          in scanned.in_project({"util.py": _UTIL, "model.py": model})
          if idiom == "var-list-filter"]


def test_each_list_trained_in_its_own_part_of_the_run_is_found():
  assert _found(_MODEL + _PHASES) == [
      ("var-list-filter", "model.py", 8), ("var-list-filter", "model.py", 9)]


def test_the_lists_trained_side_by_side_are_silent():
  assert _found(_MODEL + (
      "                self.sess.run([train_op_new, train_op_all])\n")) == []


def test_the_lists_alternating_by_parity_are_silent():
  assert _found(_MODEL + _PHASES.replace("epoch <= 4", "batch % 2 == 0")) == []


def test_a_half_warmed_up_alone_before_both_alternate_is_silent():
  # The discriminator's op runs in both parts: the halves train together.
  code = (_MODEL + _PHASES.replace(
      "                    self.sess.run(train_op_all)\n",
      "                    self.sess.run(train_op_all)\n"
      "                    self.sess.run(train_op_new)\n"))
  code = code.replace("(PROMPT_ATN)|(RNN_KEY)|(Grader)", "(Grader)")
  assert _found(code) == []
