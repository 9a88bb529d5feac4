"""`tfpartial scan`'s cost for round masks (`_held_rounds`): a training
script passing many pruning helpers' write ops, each built from a
snapshot, to one function whose loop runs them beside a step. What the
script passes is indexed once per caller and each helper's answer is
kept, so the work grows with the project, not with helpers times the
script's calls (the quadratic walk of the script's calls per helper made
it grow x16 for four times as many helpers). Each helper module's own
`__main__` block applies the masks once, so only this rule finds them. Also one
training function taking all N ops and running them in one loop of steps: each
call's arguments are mapped once and each loop's step found once, so the
work (the whole scan's, this rule's and the flow's) grows with N, not
N squared (a read measured 8,993 -> 183,473 of this rule's calls for 10
-> 40 before)."""

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned


def _project(n):
  helpers = "import numpy as np\nimport tensorflow as tf\n\n\n" + "".join(
      f"""
def get_masks{i}(weights):
    return [np.abs(w.eval()) > 0.1 for w in weights]


def apply_masks{i}(weights, masks):
    return tf.group(*[tf.assign(w, w * m) for w, m in zip(weights, masks)])
""" for i in range(n)) + "\n\nif __name__ == '__main__':\n" + "".join(
      f"    apply_masks{i}(tf.trainable_variables(), [])\n"
      for i in range(n))  # Once, beside no training: callers elsewhere.
  step = "def make(loss):\n    return tf.train.AdamOptimizer().minimize(loss)\n"
  lines = "".join(f"""
    masks{i} = pruning.get_masks{i}(weights)
    op{i} = pruning.apply_masks{i}(weights, masks{i})
    train_epoch(sess, train_op, op{i})
""" for i in range(n))
  train = f"""import tensorflow as tf
import model
import pruning


def train_epoch(sess, train_op, op):
    for step in range(100):
        sess.run(train_op)
        sess.run(op)


def main(sess, weights, loss):
    train_op = model.make(loss)
{lines}
"""
  return [_files.Source("pruning.py", helpers),
          _files.Source("model.py", "import tensorflow as tf\n\n\n" + step),
          _files.Source("train.py", train)]


def _work(n):
  count, (findings, _) = scanned.calls_made(
      lambda: _scan.scan_project(_project(n)), "_held_rounds.py")
  return count, len([f for f in findings if f.idiom == "weight-remask"])


def test_round_masks_work_grows_linearly():
  (small, found_small), (large, found_large) = _work(10), _work(40)
  assert (found_small, found_large) == (10, 40)
  assert large <= 5 * small, (small, large)


def _one_loop(n):
  """N helpers whose ops one function's loop of steps runs together."""
  helpers = _project(n)[0]
  params = ", ".join(f"op{i}" for i in range(n))
  runs = "".join(f"        sess.run(op{i})\n" for i in range(n))
  lines = "".join(f"    masks{i} = pruning.get_masks{i}(weights)\n"
                  f"    op{i} = pruning.apply_masks{i}(weights, masks{i})\n"
                  for i in range(n))
  train = f"""import tensorflow as tf
import model
import pruning


def train_epoch(sess, train_op, {params}):
    for step in range(100):
{runs}        sess.run(train_op)


def main(sess, weights, loss):
    train_op = model.make(loss)
{lines}    train_epoch(sess, train_op, {params})
"""
  return [helpers, _project(n)[1], _files.Source("train.py", train)]


def _one_loop_work(n, where):
  count, (findings, _) = scanned.calls_made(
      lambda: _scan.scan_project(_one_loop(n)), where)
  return count, len([f for f in findings if f.idiom == "weight-remask"])


def test_one_loop_of_many_ops_grows_linearly():
  for where in ("_held_rounds.py", "_snapshot_masks.py", "_flow.py", ""):
    (small, found_small), (large, found_large) = (
        _one_loop_work(10, where), _one_loop_work(40, where))
    assert (found_small, found_large) == (10, 40)
    assert large <= 5 * small, (where, small, large)
