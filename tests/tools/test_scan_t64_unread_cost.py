"""`_dropped.unread_gradients` reads each module's tree once a scan and
finds the readers of a name once, however many modules bind gradients
to that name: a project of many such modules costs about the same per
module however many there are (counted calls, not time)."""

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned


def _project(n):
  return [_files.Source(f"m{i}.py", (
      "import tensorflow as tf\n"
      "W1 = tf.Variable(tf.zeros([4, 4]))\n"
      "W2 = tf.Variable(tf.zeros([4, 4]))\n"
      "loss = tf.reduce_sum(tf.matmul(W1, W2))\n"
      "W1_grad = tf.gradients(loss, [W1])[0]\n"
      "train = tf.train.AdamOptimizer(0.1).minimize(loss)\n"))
      for i in range(n)]


def _work(n):
  return scanned.calls_made(lambda: _scan.scan_project(_project(n)),
                            "_dropped.py")[0]


def test_the_readers_of_a_name_are_found_once():
  small, large = _work(10), _work(40)
  assert large <= 5 * small, (small, large)
