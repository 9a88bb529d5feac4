"""`tfpartial scan` on a hand-written list of bare variables (part
thirty-seven's tracker notebook): variables made one by one by a helper
of the project (`weight_variable(shape)` returning `tf.Variable(...)`),
a list of some of them given to `tf.gradients` and `apply_gradients` (or
`minimize`), while the loss reads, through the script's names, trainable
variables the list leaves out that no step running with it trains: a
second sub-network fed to the first, restored from its own earlier run
and frozen by omission.

Each positive has a silent twin: the same list plus the rest, a second
optimizer over the rest in the same loop, the rest made
`trainable=False` or read only after a `stop_gradient`, gradients only
looked at, the two stages' steps alternating in one loop, two halves
with a list each.
"""

import json

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_HEAD = """\
import tensorflow as tf


def make_weight(shape, trainable=True):
    start = tf.random.truncated_normal(shape, stddev=0.1)
    return tf.Variable(start, trainable=trainable)


x = tf.placeholder(tf.float32, [None, 8])
y = tf.placeholder(tf.float32, [None, 2])
w_lower = make_weight([8, 16]LOWER)
c_lower = make_weight([16]LOWER)
h_lower = tf.nn.relu(tf.matmul(x, w_lower) + c_lower)
CUT
w_upper = make_weight([16, 2])
c_upper = make_weight([2])
out = tf.matmul(h_lower, w_upper) + c_upper
loss = tf.reduce_mean(tf.square(out - y))
lower_loss = tf.reduce_mean(tf.square(h_lower - 1.0))
picked = PICKED
sgd = tf.train.GradientDescentOptimizer(0.1)
"""

_APPLIED = """\
grads = tf.gradients(loss, picked)
upper_op = sgd.apply_gradients(zip(grads, picked))
run_op = upper_op
"""

_MINIMIZED = "run_op = sgd.minimize(loss, var_list=picked)\n"

_LOOKED = """\
grads = tf.gradients(loss, picked)
norms = [tf.norm(g) for g in grads]
run_op = norms
"""

_ONE_LOOP = """\
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(100):
        sess.run(run_op, feed_dict={x: None, y: None})
OTHER_RUN"""

_TWO_STAGES = """\
saver = tf.train.Saver()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(100):
        sess.run(lower_op, feed_dict={x: None, y: None})
    saver.save(sess, "lower.ckpt")

with tf.Session() as sess:
    saver.restore(sess, "lower.ckpt")
    for i in range(100):
        sess.run(run_op, feed_dict={x: None, y: None})
"""

_LOWER_WHOLE = "lower_op = tf.train.AdamOptimizer(0.1).minimize(lower_loss)\n"
_LOWER_LISTED = ("lower_op = tf.train.AdamOptimizer(0.1).minimize(\n"
                 "    loss, var_list=[w_lower, c_lower])\n")
_OTHER_RUN = "        sess.run(lower_op, feed_dict={x: None, y: None})\n"


def _program(step=_APPLIED, picked="[w_upper, c_upper]", lower="", cut="",
             other="", run=_ONE_LOOP, other_run=""):
  return _HEAD.replace("LOWER", lower).replace("CUT\n", cut).replace(
      "PICKED", picked) + step + other + run.replace("OTHER_RUN", other_run)


def _found(text):
  return [line for idiom, _, line in scanned.in_project({"train.py": text})
          if idiom == "var-list-filter"]


def _line(text, start):
  return next(number for number, line in enumerate(text.splitlines(), 1)
              if line.startswith(start))


def test_a_listed_upper_net_over_a_lower_net_nothing_trains_is_found():
  text = _program()
  assert _found(text) == [_line(text, "picked = ")]


def test_the_same_list_given_to_minimize_is_found():
  text = _program(step=_MINIMIZED)
  assert _found(text) == [_line(text, "picked = ")]


def test_twin_listing_every_variable_is_silent():
  assert _found(_program(picked="[w_lower, c_lower, w_upper, c_upper]")) == []


def test_twin_with_a_second_optimizer_over_the_rest_is_silent():
  # The halves each trained by their own step in the same loop.
  assert _found(_program(other=_LOWER_LISTED, other_run=_OTHER_RUN)) == []


def test_twin_whose_lower_net_is_not_trainable_is_silent():
  assert _found(_program(lower=", trainable=False")) == []


def test_twin_whose_helper_makes_untrainable_variables_by_default_is_silent():
  text = _program().replace("trainable=True", "trainable=False").replace(
      "make_weight([16, 2])", "make_weight([16, 2], trainable=True)").replace(
          "make_weight([2])", "make_weight([2], trainable=True)")
  assert "make_weight([8, 16])" in text
  assert _found(text) == []


def test_twin_reading_the_lower_net_after_a_stop_gradient_is_silent():
  assert _found(_program(cut="h_lower = tf.stop_gradient(h_lower)\n")) == []


def test_twin_that_only_looks_at_the_gradients_is_silent():
  assert _found(_program(step=_LOOKED)) == []


def test_a_second_stage_run_after_the_first_stage_in_its_own_loop_is_found():
  # The lower net trained whole first, then restored and left out.
  text = _program(other=_LOWER_WHOLE, run=_TWO_STAGES)
  assert _found(text) == [_line(text, "picked = ")]


def test_twin_alternating_the_two_steps_in_one_loop_is_silent():
  text = _program(other=_LOWER_WHOLE, other_run=_OTHER_RUN)
  assert _found(text) == []


_TEACHER = """\
import tensorflow as tf


def make_weight(shape):
    return tf.Variable(tf.random.truncated_normal(shape, stddev=0.1))


x = tf.placeholder(tf.float32, [None, 8])
w_teacher = make_weight([8, 2])
c_teacher = make_weight([2])
w_student = make_weight([8, 2])
c_student = make_weight([2])
teacher_out = tf.matmul(x, w_teacher) + c_teacher
student_out = tf.matmul(x, w_student) + c_student
loss = tf.reduce_mean(tf.square(teacher_out - student_out))
picked = [w_student, c_student]
grads = tf.gradients(loss, picked)
step = tf.train.GradientDescentOptimizer(0.1).apply_gradients(
    zip(grads, picked))
SYNC
with tf.Session() as sess:
    saver = tf.train.Saver([w_teacher, c_teacher])
    saver.restore(sess, "teacher.ckpt")
    for i in range(100):
        sess.run(step, feed_dict={x: None})
        RUN_SYNC
"""


def test_twin_with_a_teacher_meeting_the_list_only_in_the_loss_is_silent():
  # Distillation: the teacher's output is compared with the student's,
  # it feeds no layer the list trains.
  text = _TEACHER.replace("SYNC\n", "").replace("        RUN_SYNC\n", "")
  assert _found(text) == []


def test_twin_with_a_target_network_written_from_the_trained_one_is_silent():
  text = _TEACHER.replace("SYNC\n", (
      "sync = [w_teacher.assign(w_student), c_teacher.assign(c_student)]\n"
  )).replace("RUN_SYNC", "sess.run(sync)")
  assert _found(text) == []


def test_the_teacher_fed_to_the_listed_layer_is_found():
  # The same restored network now below the trained layer: frozen.
  text = _TEACHER.replace("SYNC\n", "").replace(
      "        RUN_SYNC\n", "").replace(
          "w_student = make_weight([8, 2])", "w_student = make_weight([2, 2])"
      ).replace("tf.matmul(x, w_student)", "tf.matmul(teacher_out, w_student)")
  assert _found(text) == [_line(text, "picked = ")]


def _in_main(text):
  # The script's body moved into `main()`, the helper kept at top level.
  head, body = text.split("x = tf.placeholder", 1)
  return head + "def main():\n" + "".join(
      "    " + line if line.strip() else line
      for line in ("x = tf.placeholder" + body).splitlines(True))


def test_the_same_stages_inside_a_function_are_found():
  text = _in_main(_program(other=_LOWER_WHOLE, run=_TWO_STAGES))
  assert _found(text) == [_line(text, "    picked = ")]


def test_twin_inside_a_function_alternating_is_silent():
  assert _found(_in_main(_program(other=_LOWER_WHOLE,
                                  other_run=_OTHER_RUN))) == []


def _notebook(tmp_path, text):
  cells = [{"cell_type": "code", "metadata": {}, "outputs": [],
            "execution_count": None, "source": block.splitlines(True)}
           for block in text.split("\n\n\n")]
  path = tmp_path / "train.ipynb"
  path.write_text(json.dumps({"cells": cells, "metadata": {},
                              "nbformat": 4, "nbformat_minor": 2}))
  findings, errors = _scan.scan_project([_files.read(str(path))])
  assert not errors, errors
  return [f.idiom for f in findings]


def test_the_two_stages_in_notebook_cells_are_found(tmp_path):
  text = _program(other=_LOWER_WHOLE, run=_TWO_STAGES)
  assert _notebook(tmp_path, text) == ["var-list-filter"]


def test_twin_notebook_alternating_in_one_loop_is_silent(tmp_path):
  text = _program(other=_LOWER_WHOLE, other_run=_OTHER_RUN)
  assert _notebook(tmp_path, text) == []


def _blocks(n):
  """One script of `n` two-stage blocks, each its own bare variables,
  list, steps and loops."""
  head, rest = _HEAD.split("x = tf.placeholder", 1)
  block = ("x = tf.placeholder" + rest + _APPLIED + _LOWER_WHOLE
           + _TWO_STAGES).replace("LOWER", "").replace("CUT\n", "").replace(
               "PICKED", "[w_upper, c_upper]")
  names = ("x", "y", "w_lower", "c_lower", "h_lower", "w_upper", "c_upper",
           "out", "lower_loss", "loss", "picked", "sgd", "grads",
           "upper_op", "run_op", "lower_op", "saver")
  made = []
  for i in range(n):
    text = block
    for name in sorted(names, key=len, reverse=True):
      text = _renamed(text, name, f"{name}{i}")
    made.append(text)
  return head + "\n".join(made)


def _renamed(text, name, new):
  import re  # pylint: disable=import-outside-toplevel
  return re.sub(rf"\b{name}\b", new, text)


def test_the_work_grows_linearly_with_the_blocks_of_a_script():
  # Each block's list is read by the rule (the blocks' lists together
  # are one script's filters: what the gates then say is not measured).
  small, large = (scanned.scan_work(_blocks(n), "_bare_listed.py")
                  for n in (10, 40))
  assert 0 < large <= 5 * small, (small, large)


def _deep(n):
  """One list over the last of `n` layers, each rebinding `h`."""
  layers = "".join(f"w{i} = make_weight([8, 8])\nh = tf.nn.relu(tf.matmul("
                   f"h, w{i}))\n" for i in range(n))
  return _HEAD.split("x = tf.placeholder")[0] + (
      "h = tf.placeholder(tf.float32, [None, 8])\n" + layers +
      "loss = tf.reduce_mean(tf.square(h))\n"
      f"step = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=[w{n - 1}])"
      "\nwith tf.Session() as sess:\n    for i in range(9):\n"
      "        sess.run(step)\n")


def test_the_work_grows_linearly_with_the_layers_a_loss_reaches():
  assert len(_found(_deep(3))) == 1
  small, large = (scanned.scan_work(_deep(n), "_bare_listed.py")
                  for n in (30, 120))
  assert 0 < large <= 5 * small, (small, large)
