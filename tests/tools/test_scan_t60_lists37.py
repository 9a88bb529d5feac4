"""`tfpartial scan` on part thirty-seven's missed variable lists.

A script named like a test (`train_and_eval_and_test.py`: a run that
trains, evaluates and tests) is a script: only a file that holds test
cases (a `test...` function or method, a `TestCase`, a test runner
imported) or lives under `tests/` is a test whose steps train nothing.
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
  tail = ("\n\ndef test_builds():\n"
          "    assert train_step is not None\n")
  assert _found(_files(name="model_test.py", tail=tail)) == []


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


# The neural-imaging form: a workflow object optimises a list built from
# some of its parts; a pretrained part, run in the tape upstream of a
# listed one, is added only under a flag.

_MODELS = """\
import tensorflow as tf


class Part(object):
    @property
    def parameters(self):
        return self._model.trainable_variables

    def process(self, x):
        return self._model(x)

    def load_model(self, dirname):
        self._model.load_weights(dirname + "/weights.h5")


class Camera(Part):
    def __init__(self):
        self._model = tf.keras.Sequential([tf.keras.layers.Conv2D(3, 3)])

    def loss(self, a, b):
        return tf.reduce_mean(tf.square(a - b))


class Detector(Part):
    def __init__(self, n_classes):
        self._model = tf.keras.Sequential([tf.keras.layers.Flatten(),
                                           tf.keras.layers.Dense(n_classes)])

    def loss(self, labels, probs):
        return tf.reduce_mean(
            tf.keras.losses.sparse_categorical_crossentropy(labels, probs))
"""

_FLOW = """\
import tensorflow as tf
from models import Camera, Detector


class Workflow(object):
    def __init__(self, camera_dir, n_classes, trainable=None):
        trainable = set() if trainable is None else set(trainable)
        self._trainable = trainable
        self.camera = Camera()
        self.camera.load_model(camera_dir)
        self.detector = Detector(n_classes)
        self._parameters = []
        self._parameters.extend(self.detector.parameters)
        if 'camera' in trainable:
            self._parameters.extend(self.camera.parameters)
        self._optimizer = tf.keras.optimizers.Adam()

    def run(self, x):
        y = self.camera.process(x)
        return y, self.detector.process(y)

    def training_step(self, x, target, labels):
        with tf.GradientTape() as tape:
            y, probs = self.run(x)
            loss = self.detector.loss(labels, probs)
            if 'camera' in self._trainable:
                loss += self.camera.loss(target, y)
        grads = tape.gradient(loss, self._parameters)
        self._optimizer.apply_gradients(zip(grads, self._parameters))
        return loss
"""

_TRAIN = """\
import argparse
from flow import Workflow

parser = argparse.ArgumentParser()
parser.add_argument('--train', dest='trainables', action='append')
args = parser.parse_args()
workflow = Workflow('camera', 5, args.trainables)
for i in range(100):
    workflow.training_step(None, None, None)
"""


def _workflow(flow=_FLOW):
  return {"models.py": _MODELS, "flow.py": flow, "train.py": _TRAIN}


def test_a_loaded_part_added_only_under_a_flag_is_found():
  files = _workflow()
  assert _found(files) == [("flow.py", _line(
      files["flow.py"], "if 'camera' in trainable:"))]


def test_a_loaded_part_never_added_is_found_at_the_list():
  flow = _FLOW.replace("        if 'camera' in trainable:\n"
                       "            self._parameters.extend("
                       "self.camera.parameters)\n", "")
  assert "self.camera.parameters" not in flow
  assert _found(_workflow(flow)) == [("flow.py", _line(
      flow, "self._parameters.extend(self.detector"))]


def test_its_twin_adding_the_part_on_every_path_is_silent():
  flow = _FLOW.replace("        if 'camera' in trainable:\n"
                       "            self._parameters.extend(",
                       "        self._parameters.extend(")
  assert "if 'camera' in trainable:" not in flow
  assert _found(_workflow(flow)) == []


def test_its_twin_with_a_part_not_loaded_is_silent():
  # A random network: nothing pretrained is kept, no freeze to report.
  flow = _FLOW.replace("        self.camera.load_model(camera_dir)\n", "")
  assert _found(_workflow(flow)) == []


def test_its_twin_whose_other_step_trains_the_part_is_silent():
  # A GAN's or an actor-critic's other half: its own step trains it.
  flow = _FLOW + """
    def camera_step(self, x, target):
        with tf.GradientTape() as tape:
            loss = self.camera.loss(target, self.camera.process(x))
        grads = tape.gradient(loss, self.camera.parameters)
        self._optimizer.apply_gradients(zip(grads, self.camera.parameters))
"""
  assert _found(_workflow(flow)) == []


def test_its_twin_with_a_teacher_only_compared_in_the_loss_is_silent():
  # Distillation: the loaded part's output meets the listed one's only
  # in the loss; it feeds no listed part.
  flow = _FLOW.replace(
      "        y = self.camera.process(x)\n"
      "        return y, self.detector.process(y)\n",
      "        y = self.camera.process(x)\n"
      "        return y, self.detector.process(x)\n")
  assert "self.detector.process(x)" in flow
  assert _found(_workflow(flow)) == []


def test_its_twin_running_the_part_outside_the_tape_is_silent():
  flow = _FLOW.replace(
      "        with tf.GradientTape() as tape:\n"
      "            y, probs = self.run(x)\n",
      "        y = self.camera.process(x)\n"
      "        with tf.GradientTape() as tape:\n"
      "            probs = self.detector.process(y)\n")
  assert _found(_workflow(flow)) == []


def _workflows(n):
  """`n` workflow classes of the form above in one module."""
  return "".join(_FLOW.replace("class Workflow(", f"class Workflow{i}(")
                 for i in range(n))


def test_the_parts_of_each_class_are_read_once():
  # Each class's methods read once, the steps grouped by class once:
  # four times the classes, about four times the work.
  def work(n):
    return scanned.calls_made(lambda: scanned.in_project(
        {"models.py": _MODELS, "flow.py": _workflows(n)}),
                              "_object_parts.py")[0]
  small, large = work(10), work(40)
  assert 0 < small and large <= 5 * small, (small, large)
