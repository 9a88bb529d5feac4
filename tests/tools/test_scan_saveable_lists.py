"""`tfpartial scan`'s `var-list-filter` over TF1's private list of every
saveable variable, `variables._all_saveable_objects()` (issue 30, part
thirty-five's FCRN depth training): a copy of it trimmed to its last two
entries (the prediction head, made last) and trained first, then every
variable, leaves the restored network fixed for the first part of the
run, as `tf.global_variables()[-2:]` does. The whole list trained, or the
trimmed list only restored, freezes nothing."""

import scanned

# A network and its prediction head, the head's two variables made last;
# `LIST` is what the first step trains.
_FCRN = """
import tensorflow as tf
from tensorflow.python.ops import variables


def inference(x):
    with tf.compat.v1.variable_scope('model'):
        h = tf.compat.v1.layers.conv2d(x, 8, 3, name='res1')
        return tf.compat.v1.layers.conv2d(h, 1, 3, name='ConvPred')


if __name__ == '__main__':
    x = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 3])
    y = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 1])
    loss = tf.reduce_mean(tf.abs(inference(x) - y))
LIST
    pre_train = tf.compat.v1.train.MomentumOptimizer(0.005, momentum=0.9).minimize(loss, var_list=all_var)
    train = tf.compat.v1.train.MomentumOptimizer(0.005, momentum=0.9).minimize(loss)
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for _ in range(100):
            sess.run(pre_train)
        for _ in range(1000):
            sess.run(train)
"""

_DELETED = """\
    all_var = variables._all_saveable_objects().copy()
    lens_all = len(all_var)
    for _ in range(lens_all - 2):
        del all_var[0]"""


def _line(code, start):
  return next(number for number, line in enumerate(code.splitlines(), 1)
              if line.lstrip().startswith(start))


def _found(code):
  return [(idiom, line) for idiom, _, line in scanned.in_project(code)
          if idiom == "var-list-filter"]


def test_the_list_with_all_but_its_last_two_deleted_is_found():
  code = _FCRN.replace("LIST", _DELETED)
  assert _found(code) == [("var-list-filter", _line(code, "del all_var[0]"))]


def test_the_list_sliced_to_its_last_two_is_found():
  code = _FCRN.replace(
      "LIST", "    all_var = variables._all_saveable_objects()[-2:]")
  assert _found(code) == [("var-list-filter", _line(code, "all_var = "))]


def test_the_whole_list_trains_everything():
  code = _FCRN.replace(
      "LIST", "    all_var = variables._all_saveable_objects().copy()")
  assert _found(code) == []


def test_the_trimmed_list_only_restored_freezes_nothing():
  # An evaluation-only restore of the head: no step trains the list.
  code = _FCRN.replace("LIST", _DELETED).replace(
      "var_list=all_var)", "var_list=None)").replace(
          "        sess.run(tf.compat.v1.global_variables_initializer())\n",
          "        tf.compat.v1.train.Saver(var_list=all_var).restore(sess, 'ckpt')\n")
  assert _found(code) == []


def test_a_trimmed_list_only_written_trains_nothing():
  # Two variables written from trained ones (a target network's sync):
  # no step trains the trimmed list.
  code = _FCRN.replace("LIST", _DELETED + (
      "\n    sync = [t.assign(s) for t, s in zip(all_var, tf.compat.v1.trainable_variables())]")).replace(
          "minimize(loss, var_list=all_var)", "minimize(loss)")
  assert _found(code) == []
