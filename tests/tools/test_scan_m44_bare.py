"""`tfpartial scan` on a hand-written list of bare variables made by a
helper (`_bare_listed`), the mend of its read: a whole step a helper
builds from the loss trains every variable; a variable a helper's call
makes with `trainable` given `False` (by position, or a name whose value
is not read as `True`) is no left-out trainable part; another
function's local of the same name is not this function's variable; a
step of another module over every variable, or over variables that are
not its own, may train the rest; lists joined by `+` are read; only the
parameter a helper passes on as `trainable=` decides it.

Each case is checked against the program of `test_scan_t61_bare`, whose
found form (a list of the upper layer, the lower one left out) is the
positive they start from.
"""

import scanned
import test_scan_t61_bare as bare

_TOP = "x = tf.placeholder(tf.float32, [None, 8])"

_STEP_HELPER = """\
def build_step(target):
    return tf.train.AdamOptimizer(0.1).minimize(target)


"""

_RUN_BOTH = ("        sess.run(lower_op, feed_dict={x: None, y: None})\n")


def _before_script(text, code):
  return text.replace(_TOP, code + _TOP, 1)


# M1: a whole step built in a helper.

def test_twin_with_a_whole_step_a_helper_builds_from_the_loss_is_silent():
  text = _before_script(bare._program(
      step=bare._MINIMIZED, other="lower_op = build_step(loss)\n",
      other_run=_RUN_BOTH), _STEP_HELPER)
  assert bare._found(text) == []


# M2: the lower layer made untrainable through the helper's parameter.

def test_twin_whose_lower_net_is_made_with_a_positional_false_is_silent():
  assert bare._found(bare._program(lower=", False")) == []


def test_twin_whose_lower_net_is_made_with_a_flag_set_false_is_silent():
  text = _before_script(bare._program(lower=", trainable=FLAG"),
                        "FLAG = False\n\n\n")
  assert bare._found(text) == []


def test_twin_whose_lower_net_flag_is_not_read_is_silent():
  text = bare._program(lower=", trainable=len(tf.trainable_variables()) > 0")
  assert bare._found(text) == []


def test_a_lower_net_made_with_a_positional_true_is_found():
  text = bare._program(lower=", True")
  assert bare._found(text) == [bare._line(text, "picked = ")]


# S2: only the parameter passed on as `trainable=` decides.

def test_a_helper_with_another_parameter_defaulting_to_false_is_found():
  text = bare._program().replace(
      "def make_weight(shape, trainable=True):",
      "def make_weight(shape, trainable=True, verbose=False):")
  assert bare._found(text) == [bare._line(text, "picked = ")]


# M3: another function's local of the same name.

_OTHER_FUNCTION = """\


def side_model(x):
    w_lower = make_weight([8, 1])
    c_lower = make_weight([1])
    side_loss = tf.reduce_mean(tf.matmul(x, w_lower) + c_lower)
    side_op = tf.train.AdamOptimizer(0.1).minimize(side_loss)
    return side_op
"""


def test_another_functions_locals_of_the_same_names_do_not_silence_it():
  text = bare._in_main(bare._program(step=bare._MINIMIZED)) + _OTHER_FUNCTION
  assert bare._found(text) == [bare._line(text, "    picked = ")]


def test_the_same_with_the_other_locals_renamed_is_found_too():
  text = bare._in_main(bare._program(step=bare._MINIMIZED)) + (
      _OTHER_FUNCTION.replace("w_lower", "w_side").replace(
          "c_lower", "c_side"))
  assert bare._found(text) == [bare._line(text, "    picked = ")]


# M4: a step of another module.

_MODEL = bare._program(step=bare._MINIMIZED, run="")

_TRAIN = """\
import tensorflow as tf
import model

STEP
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(100):
        sess.run(model.run_op)
        sess.run(full_op)
"""


def _in_model(step):
  return [line for idiom, path, line in scanned.in_project(
      {"model.py": _MODEL, "train.py": _TRAIN.replace("STEP", step)})
          if idiom == "var-list-filter" and path == "model.py"]


def test_twin_with_a_whole_step_in_another_module_is_silent():
  step = "full_op = tf.train.AdamOptimizer(0.1).minimize(model.loss)"
  assert _in_model(step) == []


def test_twin_with_a_step_over_the_rest_in_another_module_is_silent():
  step = ("full_op = tf.train.AdamOptimizer(0.1).minimize(\n"
          "    model.loss, var_list=[model.w_lower, model.c_lower])")
  assert _in_model(step) == []


def test_a_step_of_another_module_over_its_own_variables_lets_it_fire():
  step = ("own = tf.Variable(tf.zeros([3]))\n"
          "full_op = tf.train.AdamOptimizer(0.1).minimize(\n"
          "    tf.reduce_sum(own), var_list=[own])")
  assert _in_model(step) == [bare._line(_MODEL, "picked = ")]


# S1: lists joined by `+`.

def test_a_list_joined_by_plus_is_found():
  # Reported at the step that reads the joined list.
  text = bare._program(picked="[w_upper] + [c_upper]")
  assert bare._found(text) == [bare._line(text, "grads = ")]


def test_twin_joined_by_plus_listing_every_variable_is_silent():
  text = bare._program(picked="[w_lower, c_lower] + [w_upper, c_upper]")
  assert bare._found(text) == []


def test_a_whole_step_of_another_module_over_its_own_variables_lets_it_fire():
  # A second script, not importing the model, training its own layer.
  other = ("import tensorflow as tf\n\n"
           "own = tf.Variable(tf.zeros([3]))\n"
           "own_op = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(own))\n")
  found = [line for idiom, path, line in scanned.in_project(
      {"model.py": _MODEL, "other.py": other})
           if idiom == "var-list-filter" and path == "model.py"]
  assert found == [bare._line(_MODEL, "picked = ")]


def test_twin_whole_step_in_a_module_importing_it_is_silent():
  step = ("own = tf.Variable(tf.zeros([3]))\n"
          "full_op = tf.train.AdamOptimizer(0.1).minimize(\n"
          "    tf.reduce_sum(own) + model.loss)")
  assert _in_model(step) == []
