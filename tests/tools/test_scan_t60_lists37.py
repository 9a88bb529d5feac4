"""`tfpartial scan` on part thirty-seven's missed variable lists.

A script named like a test (`train_and_eval_and_test.py`: a run that
trains, evaluates and tests) is a script: a file so named that runs
nothing at top level, or imports a test framework, or bases a class on
its `TestCase`, or lives under `tests/`, is a test whose steps train
nothing (see test_scan_m43_lists).
The RCFusion form: two pretrained ResNet branches built under scopes of
their own, only the `rnn` and `conv1x1` scopes given to the optimizers;
each list copied by a comprehension (`[v for v in
tf.trainable_variables(scope="rnn")]`) whose variable is its own, not
what the other comprehensions bind to the same name.
"""

import scanned

_NET = """\
import numpy as np
import tensorflow as tf


class Branch(object):
    def __init__(self, x):
        w = tf.get_variable("w", [3, 3, 3, 8])
        self.out = tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"))

    def load_params(self, sess, path):
        data = np.load(path).item()
        sess.run(tf.get_variable("w").assign(data["w"]))
"""

_RUN = """\
import tensorflow as tf
from net import Branch

x = tf.placeholder(tf.float32, [None, 32, 32, 3])
y = tf.placeholder(tf.float32, [None, 10])
with tf.variable_scope("rgb"):
    model_rgb = Branch(x)
feat = model_rgb.out
with tf.variable_scope("conv1x1"):
    red = tf.layers.conv2d(feat, 4, 1)
with tf.variable_scope("rnn"):
    logits = tf.layers.dense(tf.layers.flatten(red), 10)
vars_rnn = tf.trainable_variables(scope="rnn")
vars_conv = tf.trainable_variables(scope="conv1x1")
vars_rgb = tf.trainable_variables(scope="rgb")
loss = tf.losses.softmax_cross_entropy(y, logits)
step_rnn = tf.keras.optimizers.RMSprop(1e-3).get_updates(
    loss=loss, params=vars_rnn)
step_conv = tf.keras.optimizers.RMSprop(1e-4).get_updates(
    loss=loss, params=vars_conv)
OTHER
train_step = tf.group(STEPS)
print(len(vars_rgb))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    model_rgb.load_params(sess, "rgb.npy")
    for i in range(100):
        sess.run(train_step, {x: None, y: None})
"""

_ALL = ("step_rgb = tf.keras.optimizers.RMSprop(1e-4).get_updates(\n"
        "    loss=loss, params=vars_rgb)\n")


def _files(name="train_and_eval_and_test.py", other="",
           steps="step_rnn, step_conv", tail=""):
  return {"net.py": _NET, name: _RUN.replace("OTHER\n", other).replace(
      "STEPS", steps) + tail}


def _found(files):
  return [(path, line) for idiom, path, line in scanned.in_project(files)
          if idiom == "var-list-filter"]


def _line(code, start):
  return next(number for number, line in enumerate(code.splitlines(), 1)
              if line.lstrip().startswith(start))


def test_a_script_named_like_a_test_that_trains_is_scanned():
  files = _files()
  assert _found(files) == [("train_and_eval_and_test.py", _line(
      files["train_and_eval_and_test.py"], "vars_rnn = "))]


def test_the_same_script_not_named_like_a_test_is_found_too():
  files = _files(name="train_and_eval.py")
  assert _found(files) == [("train_and_eval.py", _line(
      files["train_and_eval.py"], "vars_rnn = "))]


def test_its_twin_training_the_branch_too_is_silent():
  # The pretrained branch given its own optimizer: every scope trains.
  assert _found(_files(other=_ALL,
                       steps="step_rnn, step_conv, step_rgb")) == []


def _comprehended(files):
  # Each list copied by a comprehension over the same variable name.
  return {path: text.replace(
      'tf.trainable_variables(scope="rnn")',
      '[v for v in tf.trainable_variables(scope="rnn")]').replace(
      'tf.trainable_variables(scope="conv1x1")',
      '[v for v in tf.trainable_variables(scope="conv1x1")]').replace(
      'tf.trainable_variables(scope="rgb")',
      '[v for v in tf.trainable_variables(scope="rgb")]')
          for path, text in files.items()}


def test_lists_copied_by_comprehensions_of_one_name_are_found():
  # `v` of one comprehension is not `v` of another: the rnn list is not
  # made from the rgb scope that another comprehension reads.
  files = _comprehended(_files(name="train_and_eval.py"))
  assert "[v for v in" in files["train_and_eval.py"]
  assert _found(files) == [("train_and_eval.py", _line(
      files["train_and_eval.py"], "vars_rnn = "))]


def test_its_twin_copied_by_comprehensions_training_the_branch_is_silent():
  files = _comprehended(_files(name="train_and_eval.py", other=_ALL,
                               steps="step_rnn, step_conv, step_rgb"))
  assert _found(files) == []


def test_a_test_file_with_test_functions_is_still_a_test():
  # The run moved into a test function: nothing runs at top level.
  files = _files(name="model_test.py")
  head, body = files["model_test.py"].split("x = tf.placeholder", 1)
  files["model_test.py"] = head + "\n\ndef test_builds():\n" + "".join(
      "    " + line for line in ("x = tf.placeholder" + body).splitlines(
          True))
  assert _found(files) == []


def test_a_test_file_with_a_test_case_class_is_still_a_test():
  tail = ("\n\nclass ModelTest(tf.test.TestCase):\n"
          "    def runTest(self):\n"
          "        self.assertIsNotNone(train_step)\n")
  assert _found(_files(name="model_test.py", tail=tail)) == []


def test_a_file_under_tests_is_still_a_test():
  files = _files()
  files = {("tests/" + path if path.endswith("_test.py") else path): text
           for path, text in files.items()}
  assert _found(files) == []
