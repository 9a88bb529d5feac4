"""`tfpartial scan` on a hand-written list of bare variables made
directly (`w = tf.Variable(...)`, `w = tf.get_variable(...)`), not by a
helper of the project (the cases marked `_NOT_YET`, strict xfails, are
what main does not do yet): the rule of `test_scan_t61_bare` and the mends of
`test_scan_m44_bare`, each case rewritten with its helper's calls made
direct, keep their answers (a listed upper net over a lower one nothing
trains is found; the rest listed, a second optimizer, GAN halves, the
rest untrainable or cut by a `stop_gradient`, gradients only looked at,
alternating steps, a teacher meeting the list only in the loss, a
target network, a whole step of this or another module stay silent).

Probes: a scalar `tf.Variable(2.0)` read as a counter stays no variable
of the rule; a lower net of a Keras layer is no bare variable; a list of
direct variables beside a step over `tf.trainable_variables()` is
silent; a lower net rebound through `tf.identity` is still read; a
variable the code writes holds an input (an attack's target image).
"""

import re

import pytest

import scanned
import test_scan_m44_bare as mend
import test_scan_t61_bare as bare

# What main does not do yet: a list of direct variables is decided by
# `_some_created` (every other variable its function makes, read or not,
# is left out), without the round-44 gates `_bare_listed` applies to a
# helper's variables. Routing it to `_bare_listed` (t62-hand39's attempt)
# broke ten of the suite's found forms, where earlier rounds' rules
# disagree on these forms (a one-off step over `[a, b]` before a loop
# training everything; a flag's arms; a DP-GAN's generator trained alone):
# which rule wins is a decision left to a later round.
_NOT_YET = pytest.mark.xfail(
    strict=True, reason="a list of direct variables is not read by "
    "_bare_listed's gates yet")

_MADE = re.compile(r"make_weight\((\[[^\]]*\])(.*)\)$", re.MULTILINE)


def _direct(text):
  """`make_weight(shape, ...)` calls made `tf.Variable` calls."""
  return _MADE.sub(
      r"tf.Variable(tf.random.truncated_normal(\1, stddev=0.1)\2)", text)


def _fetched(text):
  """`make_weight(shape, ...)` calls made `tf.get_variable` calls, each
  named after the name it is bound to."""
  return re.sub(r"^(\s*)(\w+) = make_weight\((\[[^\]]*\])(.*)\)$",
                r'\1\2 = tf.get_variable("\2", \3\4)', text,
                flags=re.MULTILINE)


def _at_picked(text, start="picked = "):
  return [bare._line(text, start)]


def _check(text, expected):
  assert "make_weight(" not in text.split("x = tf.placeholder", 1)[-1]
  assert bare._found(text) == expected


def test_a_listed_upper_net_of_direct_variables_is_found():
  text = _direct(bare._program())
  _check(text, _at_picked(text))


def test_the_same_with_get_variable_is_found():
  text = _fetched(bare._program())
  _check(text, _at_picked(text))


def test_the_same_given_to_minimize_is_found():
  text = _direct(bare._program(step=bare._MINIMIZED))
  _check(text, _at_picked(text))


def test_two_stages_in_their_own_loops_are_found():
  text = _direct(bare._program(other=bare._LOWER_WHOLE, run=bare._TWO_STAGES))
  _check(text, _at_picked(text))


def test_two_stages_inside_a_function_are_found():
  text = _direct(bare._in_main(bare._program(
      other=bare._LOWER_WHOLE, run=bare._TWO_STAGES)))
  _check(text, _at_picked(text, "    picked = "))


def test_a_lower_net_made_with_a_positional_true_is_found():
  text = _direct(bare._program(lower=", True"))
  _check(text, _at_picked(text))


@_NOT_YET
def test_a_list_joined_by_plus_is_found():
  text = _direct(bare._program(picked="[w_upper] + [c_upper]"))
  _check(text, [bare._line(text, "grads = ")])


def test_the_teacher_fed_to_the_listed_layer_is_found():
  text = _direct(bare._TEACHER.replace("SYNC\n", "").replace(
      "        RUN_SYNC\n", "").replace(
          "w_student = make_weight([8, 2])", "w_student = make_weight([2, 2])"
      ).replace("tf.matmul(x, w_student)", "tf.matmul(teacher_out, w_student)"))
  _check(text, _at_picked(text))


def test_another_functions_locals_do_not_silence_it():
  text = _direct(bare._in_main(bare._program(step=bare._MINIMIZED))
                 + mend._OTHER_FUNCTION)
  _check(text, _at_picked(text, "    picked = "))


def test_twin_listing_every_variable_is_silent():
  _check(_direct(bare._program(
      picked="[w_lower, c_lower, w_upper, c_upper]")), [])


def test_twin_get_variable_listing_every_variable_is_silent():
  _check(_fetched(bare._program(
      picked="[w_lower, c_lower] + [w_upper, c_upper]")), [])


def test_twin_with_a_second_optimizer_over_the_rest_is_silent():
  _check(_direct(bare._program(other=bare._LOWER_LISTED,
                               other_run=bare._OTHER_RUN)), [])


def test_twin_lower_net_not_trainable_is_silent():
  _check(_direct(bare._program(lower=", trainable=False")), [])


def test_twin_get_variable_lower_net_not_trainable_is_silent():
  _check(_fetched(bare._program(lower=", trainable=False")), [])


@_NOT_YET
def test_twin_lower_net_made_with_a_positional_false_is_silent():
  _check(_direct(bare._program(lower=", False")), [])


@_NOT_YET
def test_twin_lower_net_flag_not_read_is_silent():
  _check(_direct(bare._program(
      lower=", trainable=len(tf.trainable_variables()) > 0")), [])


@_NOT_YET
def test_twin_lower_net_flag_set_false_is_silent():
  text = mend._before_script(
      _direct(bare._program(lower=", trainable=FLAG")), "FLAG = False\n\n\n")
  _check(text, [])


@_NOT_YET
def test_twin_cut_by_a_stop_gradient_is_silent():
  _check(_direct(bare._program(
      cut="h_lower = tf.stop_gradient(h_lower)\n")), [])


@_NOT_YET
def test_twin_only_looking_at_the_gradients_is_silent():
  _check(_direct(bare._program(step=bare._LOOKED)), [])


@_NOT_YET
def test_twin_alternating_the_two_steps_in_one_loop_is_silent():
  _check(_direct(bare._program(other=bare._LOWER_WHOLE,
                               other_run=bare._OTHER_RUN)), [])


@_NOT_YET
def test_twin_inside_a_function_alternating_is_silent():
  _check(_direct(bare._in_main(bare._program(
      other=bare._LOWER_WHOLE, other_run=bare._OTHER_RUN))), [])


@_NOT_YET
def test_twin_whole_step_a_helper_builds_from_the_loss_is_silent():
  text = mend._before_script(_direct(bare._program(
      step=bare._MINIMIZED, other="lower_op = build_step(loss)\n",
      other_run=mend._RUN_BOTH)), mend._STEP_HELPER)
  _check(text, [])


@_NOT_YET
def test_twin_teacher_meeting_the_list_only_in_the_loss_is_silent():
  _check(_direct(bare._TEACHER.replace("SYNC\n", "").replace(
      "        RUN_SYNC\n", "")), [])


def test_twin_target_network_written_from_the_trained_one_is_silent():
  _check(_direct(bare._TEACHER.replace("SYNC\n", (
      "sync = [w_teacher.assign(w_student), c_teacher.assign(c_student)]\n"
  )).replace("RUN_SYNC", "sess.run(sync)")), [])


_MODEL = _direct(mend._MODEL)


def _in_model(step):
  return [line for idiom, path, line in scanned.in_project(
      {"model.py": _MODEL, "train.py": mend._TRAIN.replace("STEP", step)})
          if idiom == "var-list-filter" and path == "model.py"]


@_NOT_YET
def test_twin_whole_step_in_another_module_is_silent():
  assert _in_model(
      "full_op = tf.train.AdamOptimizer(0.1).minimize(model.loss)") == []


@_NOT_YET
def test_twin_step_over_the_rest_in_another_module_is_silent():
  assert _in_model("full_op = tf.train.AdamOptimizer(0.1).minimize(\n"
                   "    model.loss, var_list=[model.w_lower, model.c_lower])"
                   ) == []


def test_a_step_of_another_module_over_its_own_variables_lets_it_fire():
  step = ("own = tf.Variable(tf.zeros([3]))\n"
          "full_op = tf.train.AdamOptimizer(0.1).minimize(\n"
          "    tf.reduce_sum(own), var_list=[own])")
  assert _in_model(step) == [bare._line(_MODEL, "picked = ")]


_GAN = """\
import tensorflow as tf

z = tf.placeholder(tf.float32, [None, 4])
x = tf.placeholder(tf.float32, [None, 8])
G_W = tf.Variable(tf.random.normal([4, 8]))
G_b = tf.Variable(tf.zeros([8]))
D_W = tf.Variable(tf.random.normal([8, 1]))
D_b = tf.Variable(tf.zeros([1]))
fake = tf.nn.tanh(tf.matmul(z, G_W) + G_b)
d_real = tf.matmul(x, D_W) + D_b
d_fake = tf.matmul(fake, D_W) + D_b
d_loss = -tf.reduce_mean(tf.log(tf.sigmoid(d_real)) + tf.log(
    1.0 - tf.sigmoid(d_fake)))
g_loss = -tf.reduce_mean(tf.log(tf.sigmoid(d_fake)))
d_vars = [D_W, D_b]
g_vars = [G_W, G_b]
d_step = tf.train.AdamOptimizer(0.1).minimize(d_loss, var_list=d_vars)
g_step = tf.train.AdamOptimizer(0.1).minimize(g_loss, var_list=g_vars)
with tf.Session() as sess:
    for i in range(100):
        sess.run(d_step)
        sess.run(g_step)
"""


def test_twin_gan_halves_each_listed_are_silent():
  # The generator's step reads the discriminator, trained by the other.
  assert bare._found(_GAN) == []


def test_a_generator_over_a_discriminator_nothing_trains_is_found():
  # Only the generator's step: the discriminator, applied to the listed
  # layers' output (`tf.matmul(fake, D_W)`), is above them and fixed.
  text = _generator_alone()
  assert bare._found(text) == [bare._line(text, "g_vars = ")]


def _generator_alone(*changes):
  d_step = next(line + "\n" for line in _GAN.splitlines()
                if line.startswith("d_step = "))
  text = _GAN.replace(d_step, "").replace("        sess.run(d_step)\n", "")
  for change in changes:
    text = text.replace(*change)
  return text


def test_twin_generator_over_an_untrainable_discriminator_is_silent():
  assert bare._found(_generator_alone(
      ("D_W = tf.Variable(tf.random.normal([8, 1]))",
       "D_W = tf.Variable(tf.random.normal([8, 1]), trainable=False)"),
      ("D_b = tf.Variable(tf.zeros([1]))",
       "D_b = tf.Variable(tf.zeros([1]), trainable=False)"))) == []


@_NOT_YET
def test_twin_generator_read_by_the_discriminator_stopped_is_silent():
  assert bare._found(_generator_alone((
      "d_fake = tf.matmul(fake, D_W) + D_b",
      "d_fake = tf.matmul(tf.stop_gradient(fake), D_W) + D_b"))) == []


_ACTOR_CRITIC = """\
import tensorflow as tf

s = tf.placeholder(tf.float32, [None, 4])
a_W = tf.Variable(tf.random.normal([4, 2]))
c_W = tf.Variable(tf.random.normal([6, 1]))
action = tf.nn.tanh(tf.matmul(s, a_W))
q = tf.matmul(tf.concat([s, action], 1), c_W)
actor_loss = -tf.reduce_mean(q)
critic_loss = tf.reduce_mean(tf.square(q - 1.0))
actor_step = tf.train.AdamOptimizer(0.1).minimize(actor_loss, var_list=[a_W])
critic_step = tf.train.AdamOptimizer(0.1).minimize(
    critic_loss, var_list=[c_W])
with tf.Session() as sess:
    for i in range(100):
        sess.run([actor_step, critic_step])
"""


def test_twin_actor_and_critic_each_listed_are_silent():
  assert bare._found(_ACTOR_CRITIC) == []


def test_twin_beside_a_step_over_trainable_variables_is_silent():
  # A step whose list is not bare names may train the rest.
  text = _direct(bare._program(
      other=("lower_op = tf.train.AdamOptimizer(0.1).minimize(\n"
             "    lower_loss, var_list=tf.trainable_variables())\n"),
      other_run=bare._OTHER_RUN))
  _check(text, [])


def test_twin_with_scalar_variables_read_as_counters_is_silent():
  # `tf.Variable(2.0)` is read as a counter or a rate: no variable of
  # the rule (part thirty-nine's `tf.gradients(b, xs=[w2])` study).
  text = ("import tensorflow as tf\n\n"
          "w1 = tf.Variable(2.0)\nw2 = tf.Variable(2.0)\n"
          "a = tf.multiply(w1, 3.0)\nb = tf.multiply(a, w2)\n"
          "gradients = tf.gradients(b, xs=[w2])\n"
          "opt = tf.train.GradientDescentOptimizer(0.1)\n"
          "train_op = opt.apply_gradients(zip(gradients, [w2]))\n"
          "with tf.Session() as sess:\n    for i in range(9):\n"
          "        sess.run(train_op)\n")
  assert bare._found(text) == []


def test_the_same_with_vector_variables_is_found():
  # The scalars made vectors: `w1` feeds the listed `w2`'s product.
  text = ("import tensorflow as tf\n\n"
          "w1 = tf.Variable([2.0])\nw2 = tf.Variable([2.0])\n"
          "a = tf.multiply(w1, 3.0)\nb = tf.multiply(a, w2)\n"
          "gradients = tf.gradients(b, xs=[w2])\n"
          "opt = tf.train.GradientDescentOptimizer(0.1)\n"
          "train_op = opt.apply_gradients(zip(gradients, [w2]))\n"
          "with tf.Session() as sess:\n    for i in range(9):\n"
          "        sess.run(train_op)\n")
  assert bare._found(text) == [bare._line(text, "gradients = ")]


_ATTACK = """\
import numpy as np
import tensorflow as tf

shape = [1, 8]
modifier = tf.Variable(np.zeros(shape, dtype=np.float32))
timg = tf.Variable(np.zeros(shape, dtype=np.float32))
w_model = tf.Variable(tf.random.normal([8, 2]))
new_image = tf.tanh(modifier + timg)
loss = tf.reduce_sum(tf.matmul(new_image, w_model))
step = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[modifier])
SETUP
with tf.Session() as sess:
    for i in range(9):
        sess.run(step)
"""


def test_an_input_trained_over_a_model_nothing_trains_is_found():
  # The model's weight is above the trained input: fixed by omission
  # (what `_some_created` found before, kept).
  text = _ATTACK.replace("SETUP\n", "")
  assert bare._found(text) == [bare._line(text, "step = ")]


def test_twin_input_held_in_an_assigned_variable_is_silent():
  # `timg` written by the code: an input, not a parameter; the model's
  # weight made untrainable: nothing left out.
  text = _ATTACK.replace("SETUP", "setup = tf.assign(timg, np.ones(shape))")
  text = text.replace("tf.random.normal([8, 2]))",
                      "tf.random.normal([8, 2]), trainable=False)")
  assert bare._found(text) == []


def test_twin_lower_net_a_keras_layer_is_silent():
  # The left-out part is a layer object, not a bare variable.
  text = _direct(bare._program()).replace(
      "h_lower = tf.nn.relu(tf.matmul(x, w_lower) + c_lower)",
      "h_lower = tf.keras.layers.Dense(16)(x)")
  text = "".join(line for line in text.splitlines(True)
                 if not line.startswith(("w_lower = ", "c_lower = ")))
  _check(text, [])


def test_a_made_variable_nothing_reads_left_out_is_still_found():
  # Part twenty-nine's rule (`_some_created`), kept for a variable the
  # function makes and never reads.
  text = _direct(bare._program()).replace(
      "h_lower = tf.nn.relu(tf.matmul(x, w_lower) + c_lower)",
      "h_lower = tf.keras.layers.Dense(16)(x)")
  _check(text, _at_picked(text))


def test_a_lower_net_rebound_through_identity_is_still_found():
  # `w_lower` rebound to a tensor read from it: the read still reaches
  # the variable, left out of the list.
  text = _direct(bare._program()).replace(
      "h_lower = tf.nn.relu", "w_lower = tf.identity(w_lower)\n"
      "c_lower = tf.identity(c_lower)\nh_lower = tf.nn.relu")
  _check(text, _at_picked(text))


def test_twin_rebound_lower_net_listed_is_silent():
  text = _direct(bare._program(
      picked="[w_upper, c_upper, w_lower, c_lower]")).replace(
          "h_lower = tf.nn.relu", "w_lower = tf.identity(w_lower)\n"
          "h_lower = tf.nn.relu")
  _check(text, [])
