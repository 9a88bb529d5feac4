"""`tfpartial scan` works out what a `session.run` fetches only after
what it feeds could be a finding (most runs feed batches of data: a
notebook project's hundreds of runs made its scans slow). Deciding later
must not lose one: a fed gradient masked far from the run, or a fetched
op known only by the name another file assigns a train step or a write
to, is still found; and the fetched op still decides."""

import textwrap

import scanned


_scan_files = scanned.in_project


# The model's file: its train op and its write op assigned to attributes
# that runs fetch from an object the flow cannot follow.
_MODEL = """\
    import tensorflow as tf

    class Model(object):
      def __init__(self, loss, w):
        opt = tf.train.GradientDescentOptimizer(0.1)
        self.grad_ph = tf.placeholder(tf.float32, w.shape)
        self.train_op = opt.apply_gradients([(self.grad_ph, w)])
        self.w_ph = tf.placeholder(tf.float32, w.shape)
        self.assign_op = tf.assign(w, self.w_ph)
    """

# A helper in a third file masks what it is given: nothing at the run
# says so (the feed reads a name, like a batch of data).
_HELPERS = """\
    import numpy as np

    def keep(values, mask):
      return values * mask
    """


def _loop(fetched, fed):
  return f"""\
      import numpy as np
      import tensorflow as tf
      from helpers import keep

      def loop(sess, model, batches, loss, w):
        runner = make_runner(model)
        grads = tf.gradients(loss, [w])
        mask = np.ones(w.shape)
        mask[0] = 0
        for batch in batches:
          values = sess.run(grads, feed_dict={{model.x: batch}})
          fed = {fed}
          sess.run(runner.{fetched}, feed_dict={{model.grad_ph: fed}})
      """


def test_a_gradient_masked_in_a_helper_fed_to_a_train_op_is_found():
  assert _scan_files({
      "model.py": _MODEL, "helpers.py": _HELPERS,
      "train.py": _loop("train_op", "keep(values[0], mask)"),
  }) == [("grads-mask", "helpers.py", 4)]


def test_the_same_feed_to_an_op_that_does_not_train_is_not_reported():
  assert _scan_files({
      "model.py": _MODEL, "helpers.py": _HELPERS,
      "train.py": _loop("summary_op", "keep(values[0], mask)"),
  }) == []


def test_a_batch_fed_to_a_train_op_is_not_reported():
  assert _scan_files({
      "model.py": _MODEL, "helpers.py": _HELPERS,
      "train.py": _loop("train_op", "batch"),
  }) == []


def _remask(fetched):
  return textwrap.dedent(_MODEL) + textwrap.dedent(f"""\

      def prune(sess, model, runner, w):
        mask = np.ones(w.shape)
        mask[0] = 0
        w_now = sess.run(w)
        sess.run(runner.{fetched}, feed_dict={{model.w_ph: w_now * mask}})

      def train(sess, model, runner, w):
        for step in range(100):
          sess.run(runner.train_op)
          prune(sess, model, runner, w)
      """)


def test_a_variable_read_out_masked_and_fed_to_a_write_op_is_found():
  assert _scan_files({
      "model.py": _remask("assign_op"),
  }) == [("weight-remask", "model.py", 15)]


def test_the_same_values_fed_to_an_op_that_writes_nothing_are_silent():
  assert _scan_files({
      "model.py": _remask("summary_op"),
  }) == []
