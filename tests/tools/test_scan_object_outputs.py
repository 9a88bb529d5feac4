"""`tfpartial scan`'s `var-list-filter` on a head trained alone over a
pretrained network whose outputs a method of its object returns
(UniRep's tutorial: `final_hidden, x = b.get_rep_ops()`, a method that
only returns `self._top_final_hidden`): the head's loss reads that
network, so the filter keeping the head's scope leaves it fixed. A
helper of plain operations over its own arguments stays a loss helper,
and a head over placeholders stays a model of its own (silent)."""

from tests.tools import scanned

_BABBLER = """
import tensorflow as tf


class babbler(object):
    def __init__(self, batch_size):
        self._x = tf.placeholder(tf.int32, [batch_size, None])
        with tf.variable_scope("rnn"):
            cell = tf.nn.rnn_cell.LSTMCell(64)
            outputs, state = tf.nn.dynamic_rnn(cell, tf.one_hot(self._x, 26),
                                               dtype=tf.float32)
        self._top_final_hidden = state.h

    def get_rep_ops(self):
        return self._top_final_hidden, self._x
"""

_TUTORIAL = """
import tensorflow as tf
from unirep import babbler

b = babbler(batch_size=12)
final_hidden, x_placeholder = b.get_rep_ops()
y_placeholder = tf.placeholder(tf.float32, shape=[None, 1])
with tf.variable_scope("top"):
    prediction = tf.contrib.layers.fully_connected(final_hidden, 1)
loss = tf.losses.mean_squared_error(y_placeholder, prediction)
top_variables = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="top")
optimizer = tf.train.AdamOptimizer(1e-3)
top_only_step_op = optimizer.minimize(loss, var_list=top_variables)
all_step_op = optimizer.minimize(loss)
with tf.Session() as sess:
    for i in range(10):
        sess.run([loss, top_only_step_op], feed_dict={y_placeholder: [[42]]})
    for i in range(10):
        sess.run([loss, all_step_op], feed_dict={y_placeholder: [[42]]})
"""


def _found(files):
  return [f for f in scanned.in_project(files) if f[0] == "var-list-filter"]


def test_a_head_over_what_a_method_of_the_network_returns_is_found():
  assert _found({"unirep.py": _BABBLER, "tutorial.py": _TUTORIAL}) == [
      ("var-list-filter", "tutorial.py", 11)]


def test_the_same_head_without_the_network_module_is_found():
  assert _found({"tutorial.py": _TUTORIAL}) == [
      ("var-list-filter", "tutorial.py", 11)]


def test_a_head_over_placeholders_only_is_silent():
  # The head's loss reads nothing but placeholders: a model of its own.
  code = _TUTORIAL.replace(
      "final_hidden, x_placeholder = b.get_rep_ops()",
      "final_hidden = tf.placeholder(tf.float32, [None, 64])")
  assert _found({"unirep.py": _BABBLER, "tutorial.py": code}) == []


_HELPER = """
import tensorflow as tf


class Metrics(object):
    def __init__(self, scale):
        self.scale = scale

    def squared(self, a, b):
        return tf.reduce_mean(tf.square(a - b))


def train(x, y, metrics):
    with tf.variable_scope("critic"):
        h = tf.layers.dense(x, 32)
        score = tf.layers.dense(h, 1)
    loss = metrics.squared(score, y)
    critic_vars = [v for v in tf.trainable_variables()
                   if v.name.startswith("critic")]
    return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=critic_vars)
"""


def test_a_loss_method_over_its_own_arguments_is_silent():
  # `metrics.squared` never reads its object: a loss helper, and the
  # critic's loss reads only the critic, built from the inputs.
  assert _found({"t.py": _HELPER}) == []


_SCRIPT = """
import tensorflow as tf
from unirep import babbler

if __name__ == '__main__':
    b = babbler(batch_size=12)
    final_hidden, x_placeholder = b.get_rep_ops()
    y_placeholder = tf.placeholder(tf.float32, shape=[None, 1])
    with tf.variable_scope("top"):
        prediction = tf.contrib.layers.fully_connected(final_hidden, 1)
    loss = tf.losses.mean_squared_error(y_placeholder, prediction)
    top_variables = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                      scope="top")
    optimizer = tf.train.AdamOptimizer(1e-3)
    top_only_step_op = optimizer.minimize(loss, var_list=top_variables)
    all_step_op = optimizer.minimize(loss)
    with tf.Session() as sess:
        for i in range(10):
            sess.run([loss, all_step_op], feed_dict={y_placeholder: [[42]]})
"""


def test_a_script_s_head_step_that_no_run_fetches_is_silent():
  # tamtzehei's train.py: the head's op is built under the script's
  # `__main__` block, and only the joint op is ever run.
  assert _found({"unirep.py": _BABBLER, "train.py": _SCRIPT}) == []


def test_a_script_s_head_step_that_a_run_fetches_is_found():
  # The tutorial's order: the head alone first, then the joint op.
  code = _SCRIPT.replace(
      "        for i in range(10):\n",
      "        for i in range(10):\n"
      "            sess.run(top_only_step_op)\n", 1)
  assert _found({"unirep.py": _BABBLER, "train.py": code}) == [
      ("var-list-filter", "train.py", 12)]


def test_a_step_built_in_a_lambda_of_a_session_script_is_still_read():
  # A lambda's scope is no module: neither the script's `__main__` test
  # nor the scopes a function opens may read its body as statements
  # (a DQN's `tf.cond(flag, lambda: opt.minimize(...))`; main stopped
  # var-list-filter on this project with a TypeError).
  code = """
import tensorflow as tf

loss = tf.reduce_mean(tf.square(net(x) - y))
head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="head")
opt = tf.train.AdamOptimizer(1e-3)
step = tf.cond(flag, lambda: opt.minimize(loss, var_list=head),
               lambda: opt.minimize(loss))
with tf.Session() as sess:
    sess.run(step)
"""
  assert _found({"t.py": code}) == [("var-list-filter", "t.py", 5)]
