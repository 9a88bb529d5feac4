"""`_handed` reads the project's import graph once a scan: a project of
many modules that each import a model, hand it on and read a parameter
unnamed costs about the same per module however many there are
(counted calls, not time)."""

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned


def _project(n):
  return [_files.Source(f"m{i}.py", (
      "import tensorflow as tf\n"
      f"import m{(i + 1) % n}\n"
      "W1 = tf.Variable(tf.zeros([4, 4]))\n"
      "W2 = tf.Variable(tf.zeros([4, 4]))\n"
      "loss = tf.reduce_sum(tf.matmul(W1, W2))\n"
      "W1_grad = tf.gradients(loss, [W1])[0]\n"
      "train = tf.train.AdamOptimizer(0.1).minimize(loss)\n"
      "def pick(obj, key):\n  return getattr(obj, key)\n"
      f"print(pick(m{(i + 1) % n}, 'W2_' + 'grad'))\n"))
      for i in range(n)]


def _work(n):
  return scanned.calls_made(lambda: _scan.scan_project(_project(n)),
                            "_handed.py")[0]


def test_the_import_graph_is_read_once():
  small, large = _work(10), _work(40)
  assert small > 0
  assert large <= 5 * small, (small, large)
