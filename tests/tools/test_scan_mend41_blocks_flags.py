"""`tfpartial scan` after the review of part thirty-five's scanner change
(issue 30, mend 41): a call inside a `with tf.variable_scope('s')` block
runs that scope's variables only if it makes some there (a layer or
variable maker, a project function whose body makes them), so a
teacher's soft targets, its loss, a `stop_gradient` of its output or a
pseudo-label built in the student's block are no earlier stage the
student leaves out. Flags a counter test sets choose each part of the
run only when nothing else assigns them and they are read after the
test in its loop; they are read once per function, so the work grows
linearly. `_all_saveable_objects(scope=...)` narrows as a scope does."""

import scanned
import test_scan_flagged_stages
import test_scan_saveable_lists
import test_scan_scoped_blocks

_DISTILL = """
import tensorflow as tf
from tensorflow.compat.v1.layers import dense

x = tf.compat.v1.placeholder(tf.float32, [None, 30])
y = tf.compat.v1.placeholder(tf.int32, [None])
T = 4.0
with tf.compat.v1.variable_scope("teacher"):
    t_logits = dense(dense(x, 64, activation='relu'), 10)
with tf.compat.v1.variable_scope("student"):
    s_logits = dense(x, 10)
    soft = SOFT
    s_loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=soft, logits=s_logits / T))
t_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "teacher")
s_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "student")
t_loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(logits=t_logits, labels=y)
t_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(t_loss, var_list=t_vars)
s_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(s_loss, var_list=s_vars)

with tf.compat.v1.Session() as sess:
    for step in range(10000):
        sess.run(t_op)
    for step in range(10000):
        sess.run(s_op)
"""

_SOFT = "tf.nn.softmax(t_logits / T)"

# A VAE trained first, then a head in `supervised` trained alone.
_SEMI = test_scan_scoped_blocks._SEMI.replace(
    'with tf.compat.v1.variable_scope("unsupervised"):',
    'HEAD_MAKER\nwith tf.compat.v1.variable_scope("unsupervised"):').replace(
        "logits = dense(inputs=HEAD_INPUT, units=2)",
        "logits = HEAD\n    TARGET").replace(
            "SUPER_COST", "COST").replace("[FIRST]", "[vae_optimizer]").replace(
                "[SECOND]", "[super_optimizer]")


def _semi(head="dense(inputs=x, units=2)", target="pass", cost=(
    "tf.compat.v1.losses.sparse_softmax_cross_entropy("
    "logits=logits, labels=y)"), maker=""):
  return _SEMI.replace("HEAD_MAKER", maker).replace("HEAD", head).replace(
      "TARGET", target).replace("COST", cost)


def _line(code, start):
  return next(number for number, line in enumerate(code.splitlines(), 1)
              if line.lstrip().startswith(start))


def _found(code):
  return [(idiom, line) for idiom, _, line in scanned.in_project(code)
          if idiom == "var-list-filter"]


def test_a_teachers_soft_targets_in_the_students_block_are_no_stage():
  assert _found(_DISTILL.replace("SOFT", _SOFT)) == []


def test_a_stopped_teacher_output_in_the_students_block_is_no_stage():
  assert _found(_DISTILL.replace(
      "SOFT", f"tf.stop_gradient({_SOFT})")) == []


def test_soft_targets_outside_and_the_loss_inside_are_no_stage():
  code = _DISTILL.replace("    soft = SOFT\n", "").replace(
      's_vars = tf', f"soft = {_SOFT}\ns_vars = tf")
  assert _found(code) == []


def test_a_loss_alone_in_the_students_block_reads_no_stage():
  code = _DISTILL.replace("    soft = SOFT\n", "").replace(
      "    t_logits = dense(dense(x, 64, activation='relu'), 10)\n",
      "    t_logits = dense(dense(x, 64, activation='relu'), 10)\n"
      f"soft = {_SOFT}\n")
  assert _found(code) == []


def test_pseudo_labels_from_the_vae_in_the_heads_block_are_no_stage():
  assert _found(_semi(
      target="pseudo = tf.argmax(x_hat[:, :2], 1)",
      cost="tf.compat.v1.losses.sparse_softmax_cross_entropy("
           "logits=logits, labels=pseudo)")) == []


def test_a_stopped_target_from_the_vae_in_the_heads_block_is_no_stage():
  assert _found(_semi(
      target="target = tf.stop_gradient(x_hat[:, :2])",
      cost="tf.reduce_mean(tf.square(logits - target))")) == []


def test_a_head_on_the_code_made_by_a_layer_in_the_block_is_still_found():
  code = _semi(head="dense(inputs=z, units=2)")
  assert _found(code) == [("var-list-filter",
                           _line(code, "supervised_vars = "))]


def test_a_head_made_by_a_project_function_in_the_block_is_still_found():
  code = _semi(head="head(z)", maker=(
      "def head(h):\n"
      "    w = tf.compat.v1.get_variable('w', [10, 2])\n"
      "    return tf.matmul(h, w)\n"))
  assert _found(code) == [("var-list-filter",
                           _line(code, "supervised_vars = "))]


def test_a_project_function_making_nothing_in_the_block_is_no_stage():
  code = _semi(target="target = probe(x_hat)", maker=(
      "def probe(h):\n    return tf.stop_gradient(h[:, :2])\n"),
               cost="tf.reduce_mean(tf.square(logits - target))")
  assert _found(code) == []


# Two steps on two parts of one scope; `SWITCH` follows the counter test.
_FLAGS = test_scan_flagged_stages._STAGED.replace(
    "if TEST:", "if epoch <= 30:").replace(
        "multi = True\n                if single:",
        "multi = True\n                SWITCH\n                if single:")


def test_flags_set_only_by_the_counter_test_choose_the_parts():
  code = _FLAGS.replace("SWITCH", "pass")
  assert _found(code) == [("var-list-filter", _line(code, "base_var = ")),
                          ("var-list-filter", _line(code, "att_var = "))]


def test_flags_set_again_by_parity_choose_no_part_of_the_run():
  assert _found(_FLAGS.replace(
      "SWITCH", "single = i % 2 == 0\n                multi = not single")) == []


def test_flags_both_set_again_choose_no_part_of_the_run():
  assert _found(_FLAGS.replace("SWITCH", "single = multi = True")) == []


def test_flags_read_only_after_the_loops_choose_no_part_of_the_run():
  code = _FLAGS.replace("                SWITCH\n", "").replace(
      "                if single:\n                    self.sess.run("
      "self.base_optim)\n                if multi:\n                    "
      "self.sess.run([self.loss, self.att_optim])\n",
      "                self.sess.run([self.base_optim, self.att_optim])\n"
      "        if single:\n            self.sess.run(self.base_optim)\n"
      "        if multi:\n            self.sess.run([self.loss, "
      "self.att_optim])\n")
  assert "                if single" not in code
  assert _found(code) == []


_MODULE_HEAD = """
import tensorflow as tf
x = tf.compat.v1.placeholder(tf.float32, [None, 3])
with tf.compat.v1.variable_scope('r2n'):
    h = tf.compat.v1.layers.dense(x, 8, name='l1')
    out = tf.compat.v1.layers.dense(h, 1, name='att')
loss = tf.reduce_mean(out)
base_var = [v for v in tf.compat.v1.trainable_variables() if v.name.startswith('r2n/l')]
att_var = [v for v in tf.compat.v1.trainable_variables() if v.name.startswith('r2n/att')]
base_optim = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(loss, var_list=base_var)
att_optim = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(loss, var_list=att_var)
sess = tf.compat.v1.Session()
"""


def _many_flagged_loops(n):
  """`n` module-level loops, each choosing the two ops by flags."""
  return _MODULE_HEAD + "".join(
      f"for epoch{i} in range(50):\n"
      f"    if epoch{i} <= 30:\n        single{i} = True\n"
      f"        multi{i} = False\n    else:\n        single{i} = False\n"
      f"        multi{i} = True\n    if single{i}:\n"
      f"        sess.run(base_optim)\n    if multi{i}:\n"
      f"        sess.run([loss, att_optim])\n" for i in range(n))


def test_the_flags_of_a_function_are_read_once_for_its_counter_tests():
  # Was quadratic: each counter test setting flags walked the whole
  # module again (x13.9 for 4 times the loops at a89cae3).
  small, large = (scanned.scan_work(_many_flagged_loops(n), "_scheduled.py")
                  for n in (30, 120))
  assert large <= 6 * small, (small, large)


_SAVEABLE = test_scan_saveable_lists._FCRN.replace(
    "\n\n\nif __name__", "\n\nif __name__").replace(
        "LIST\n", "    all_var = variables._all_saveable_objects(SCOPE)\n")


def test_saveable_objects_of_a_scope_trained_first_are_found():
  code = _SAVEABLE.replace("SCOPE", "scope='model/ConvPred'")
  assert _found(code) == [("var-list-filter", _line(code, "all_var = "))]


def test_saveable_objects_of_a_scope_given_first_are_found():
  code = _SAVEABLE.replace("SCOPE", "'model/ConvPred'")
  assert _found(code) == [("var-list-filter", _line(code, "all_var = "))]
