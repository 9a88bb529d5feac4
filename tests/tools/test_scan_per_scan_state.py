"""What one scan learns stays with that scan: no module-level cache of the
scanner holds a scan's trees once it is done, so two scans in one
process (a language server, a test run) share no state and memory goes
back with each."""

import ast
import gc
import textwrap

from tfpartial._tools.scan import _scan

# Two ops chosen apart by a loop's counter (`_scheduled` reads the
# function's facts once), a list shortened in place (`_shortened_lists`).
_SCHEDULED = """\
    import tensorflow as tf

    def {name}(loss, steps):
        opt = tf.train.AdamOptimizer(1e-3)
        head = [v for v in tf.trainable_variables() if 'head' in v.name]
        head.remove(head[0])
        train_head = opt.minimize(loss, var_list=head)
        train_all = opt.minimize(loss)
        sess = tf.Session()
        for step in range(steps):
            if step < 1000:
                train_op = train_head
            else:
                train_op = train_all
            sess.run(train_op)
    """


def _alive(name):
  """How many function nodes named `name` are still reachable."""
  gc.collect()
  return sum(1 for each in gc.get_objects()
             if isinstance(each, ast.FunctionDef) and each.name == name)


def _scanned(name):
  text = textwrap.dedent(_SCHEDULED.format(name=name))
  return [(f.idiom, f.line) for f in _scan.scan_text("t.py", text)]


def test_a_scan_keeps_none_of_its_trees_once_done():
  assert _scanned("train_t28_first") == [("var-list-filter", 5)]
  assert _alive("train_t28_first") == 0


def test_two_scans_in_one_process_share_no_state():
  first = _scanned("train_t28_again")
  second = _scanned("train_t28_again")
  assert first == second == [("var-list-filter", 5)]
  assert _alive("train_t28_again") == 0
