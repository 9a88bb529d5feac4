"""`tfpartial scan` on files with unresolved merge conflicts, after the
review of the conflict reader: a freeze on either side of a conflict is
found (both sides kept where that parses, as the reader before it did at
the top level; else each side read as its own version of the file), the
note says which sides were read and that a diff3 base was not; markers
shown inside a string are no conflict (a Python 2 file is read as one,
with no note); a conflict beside another broken block loses only that
block; nested conflicts are read in one pass."""

import textwrap

import scanned

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scan

_HEAD = """\
    import tensorflow as tf
    x = tf.placeholder(tf.float32, [None, 4])
    with tf.variable_scope('base'):
        h = tf.layers.dense(x, 8)
    with tf.variable_scope('head'):
        y = tf.layers.dense(h, 1)
    loss = tf.reduce_mean(tf.square(y))
    opt = tf.train.AdamOptimizer(1e-3)
"""
_FILTER = ("head_vars = [v for v in tf.trainable_variables() "
           "if v.name.startswith('head')]")
_RUN = """\
    with tf.Session() as sess:
        sess.run(train_op)
"""


def _scan_of(text):
  scan = _scan.scan([_files.Source("train.py", textwrap.dedent(text))])
  return [(f.idiom, f.line) for f in scan.findings], scan.partly


def test_a_filter_on_the_other_side_at_the_top_level_is_found():
  # p1: a rebase's HEAD is upstream; the other side is the user's code.
  text = _HEAD + (
      "    <<<<<<< HEAD\n    train_op = opt.minimize(loss)\n    =======\n"
      f"    {_FILTER}\n"
      "    train_op = opt.minimize(loss, var_list=head_vars)\n"
      "    >>>>>>> feature\n") + _RUN
  found, partly = _scan_of(text)
  assert found == [("var-list-filter", 12)]
  assert partly == [
      "train.py:9: unresolved merge conflicts at lines 9-14: read twice, "
      "on the first side of each and on the second, the findings of either "
      "reported (the file cannot run as committed); the rest is scanned"]


def _split_call(first, second, base=None):
  """A conflict inside a call's arguments: both sides together do not
  parse, each side alone does."""
  lines = [f"    {_FILTER}", "    train_op = opt.minimize(",
           "    <<<<<<< HEAD", f"        {first})"]
  if base is not None:
    lines += ["    ||||||| merged common ancestors", f"        {base})"]
  lines += ["    =======", f"        {second})", "    >>>>>>> feature"]
  return _HEAD + "\n".join(lines) + "\n" + _RUN


def test_a_filter_on_the_second_side_of_a_split_call_is_found():
  found, partly = _scan_of(_split_call("loss", "loss, var_list=head_vars"))
  assert found == [("var-list-filter", 9)]
  assert partly == [
      "train.py:11: unresolved merge conflicts at lines 11-15: read twice, "
      "on the first side of each and on the second, the findings of either "
      "reported (the file cannot run as committed); the rest is scanned"]


def test_a_filter_on_the_first_side_of_a_split_call_is_found():
  found, _ = _scan_of(_split_call("loss, var_list=head_vars", "loss"))
  assert found == [("var-list-filter", 9)]


def test_neither_side_filtering_is_silent():
  found, _ = _scan_of(_split_call("loss", "loss, global_step=None"))
  assert found == []


def test_the_note_says_the_diff3_base_is_not_scanned():
  found, partly = _scan_of(_split_call(
      "loss", "loss, global_step=None", base="loss, var_list=head_vars"))
  assert found == []
  assert partly == [
      "train.py:11: unresolved merge conflicts at lines 11-17: read twice, "
      "on the first side of each and on the second, the findings of either "
      "reported; their diff3 base is not scanned (the file cannot run as "
      "committed); the rest is scanned"]


_PY2_DOC = '''\
    """Resolve merge conflicts in config files.

    A conflicted file looks like this:

    <<<<<<< HEAD
    learning_rate = 0.1
    =======
    learning_rate = 0.2
    >>>>>>> feature
    """
    import tensorflow as tf

    print "resolving"
    x = tf.placeholder(tf.float32, [None, 4])
    with tf.variable_scope('base'):
        h = tf.layers.dense(x, 8)
    with tf.variable_scope('head'):
        y = tf.layers.dense(h, 1)
    loss = tf.reduce_mean(tf.square(y))
    head_vars = [v for v in tf.trainable_variables() if v.name.startswith('head')]
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head_vars)
    '''


def test_markers_shown_in_a_docstring_are_no_conflict():
  # p2: a Python 2 file; no note of conflicts, read as Python 2.
  found, partly = _scan_of(_PY2_DOC)
  assert found == [("var-list-filter", 20)]
  assert partly == []


def test_a_conflict_in_a_python_2_file_says_what_it_was_read_as():
  text = _HEAD + (
      '    print "training"\n'
      "    <<<<<<< HEAD\n    train_op = opt.minimize(loss)\n    =======\n"
      f"    {_FILTER}\n"
      "    train_op = opt.minimize(loss, var_list=head_vars)\n"
      "    >>>>>>> feature\n") + _RUN
  found, _ = _scan_of(text)
  assert found == [("var-list-filter", 13)]
  project = _project.Project([_files.Source("t.py", textwrap.dedent(text))])
  module = project.modules[0]
  project.parsed(module)
  assert module.rewritten == (
      "a file with unresolved merge conflicts, read as a Python 2 file")


def test_a_conflict_beside_another_broken_block_loses_only_that_block():
  text = _HEAD + (
      "    def broken(:\n        pass\n"
      "    with tf.device('/cpu:0'):\n"
      f"        {_FILTER}\n"
      "    <<<<<<< HEAD\n"
      "        train_op = opt.minimize(loss, var_list=head_vars)\n"
      "    =======\n        train_op = opt.minimize(loss)\n"
      "    >>>>>>> feature\n") + _RUN
  found, partly = _scan_of(text)
  assert found == [("var-list-filter", 12)]
  assert [p.split(": they")[0] for p in partly] == [
      "train.py:9: skipped lines 9-10"]
  assert partly[0].endswith(
      "read on the first side of each unresolved merge conflict at lines "
      "13-17")


def test_a_nested_conflict_is_read_on_each_side():
  text = _HEAD + (
      "    <<<<<<< HEAD\n    <<<<<<< HEAD\n"
      f"    {_FILTER}\n"
      "    train_op = opt.minimize(loss, var_list=head_vars)\n"
      "    =======\n    train_op = opt.minimize(loss)\n"
      "    >>>>>>> inner\n    =======\n    train_op = opt.minimize(loss)\n"
      "    >>>>>>> outer\n") + _RUN
  found, partly = _scan_of(text)
  assert found == [("var-list-filter", 11)]
  assert partly[0].startswith(
      "train.py:9: unresolved merge conflicts at lines 9-18:")


def _nested(depth):
  """`depth` conflicts nested in one another, markers all of one length."""
  return "\n".join(["import tensorflow as tf"] + ["<<<<<<< HEAD"] * depth + [
      "x = 1"] + ["=======", "y = 2", ">>>>>>> o"] * depth + [
          "op = tf.train.AdamOptimizer().minimize(x * y)"]) + "\n"


def test_nested_conflicts_cost_linear_work():
  # Was quadratic: each read resolved one level and read the file again.
  small, large = (scanned.scan_work(_nested(n)) for n in (100, 400))
  assert large <= 6 * small, (small, large)
