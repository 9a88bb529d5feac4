"""The project-wide read of `_fetched_out` (may a module read attributes
unnamed?) is made once a project, not once per kept name: a project of
many modules, each keeping its own gradients only fetched, costs about
the same per module however many there are (counted calls, not time)."""

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned


def _project(n):
  return [_files.Source(f"m{i}.py", (
      "import tensorflow as tf\n\n"
      f"class M{i}:\n"
      "  def __init__(self, cost, w, v):\n"
      "    opt = tf.train.AdamOptimizer(0.1)\n"
      "    self.train = opt.minimize(cost)\n"
      f"    self.grads{i} = opt.compute_gradients(cost, [w])\n\n"
      "def fisher(sess, m):\n"
      f"  return sess.run([m.grads{i}]), getattr(m, 'train')\n"))
      for i in range(n)]


def _work(n):
  return scanned.calls_made(lambda: _scan.scan_project(_project(n)),
                            "_fetched_out.py")[0]


def test_the_unnamed_reads_are_read_once_a_project():
  small, large = _work(10), _work(40)
  assert large <= 5 * small, (small, large)


def _one_module(n):
  """One module keeping `n` names, each fetched by its own `run`."""
  return [_files.Source("big.py", "import tensorflow as tf\n\n" + "".join(
      f"class M{i}:\n"
      "  def __init__(self, cost, w):\n"
      "    opt = tf.train.AdamOptimizer(0.1)\n"
      "    self.train = opt.minimize(cost)\n"
      f"    self.grads{i} = opt.compute_gradients(cost, [w])\n\n"
      f"def fisher{i}(sess, m):\n"
      f"  return sess.run([m.grads{i}])\n\n" for i in range(n)))]


def test_the_runs_of_a_module_are_read_once_however_many_names():
  # Each run read once per kept name was x16 for 4x the names.
  small, large = (scanned.calls_made(
      lambda: _scan.scan_project(_one_module(n)), "_fetched_out.py")[0]
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)
