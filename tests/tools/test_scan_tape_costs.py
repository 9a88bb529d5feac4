"""`tfpartial scan` after the review of the tape costs: what a gate reads
of a whole function, class or module for one step (the `if`s switched
off around it, whether the function applies its gradients, the parts a
class's methods run each part on, the calls of each name, the lists the
other steps of a class train, a module's `Saver`s and `restore`s) is read
once, and what it reads of one step once per step, so a function holding
many tapes, a module restoring a part beside many steps and a module of
many classes each with its own train step cost about the same per tape,
step or class however many there are."""

import pytest

import scanned
import test_scan_round_costs as round_costs

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _project
from tfpartial._tools.scan.idioms._wholes import _worker_pairs


def _tapes_of_one_function(n):
  """One function: `n` tapes, each of a loss of its own, each applied to
  the whole model."""
  return ("import tensorflow as tf\n\ndef train(model, opt, x):\n" + "".join(
      f"  with tf.GradientTape() as tape{i}:\n"
      f"    l{i} = tf.reduce_mean(model(x))\n"
      f"  g{i} = tape{i}.gradient(l{i}, model.trainable_variables)\n"
      f"  opt.apply_gradients(zip(g{i}, model.trainable_variables))\n"
      for i in range(n)))


def _steps_beside_a_restored_part(n):
  """One module: a `Saver` over a classifier's variables, restored, and
  `n` functions each training the scope of a sampler built in front of
  it (the sampler idiom of a point-cloud script, repeated)."""
  return ("import tensorflow as tf\n\n"
          "classifier_params = [v for v in tf.global_variables() "
          "if v.name.startswith('classifier')]\n"
          "classifier_saver = tf.train.Saver(var_list=classifier_params)\n\n"
          "def load(sess, path):\n"
          "  classifier_saver.restore(sess, path)\n\n" + "".join(
              f"def train{i}(x, labels):\n"
              f"  with tf.variable_scope('sampler{i}'):\n"
              f"    points = SAMPLER.get_model(x)\n"
              f"  loss = CLASSIFIER.get_loss(CLASSIFIER.get_model(points), "
              f"labels)\n"
              f"  params = [v for v in tf.trainable_variables() "
              f"if v.name.startswith('sampler{i}')]\n"
              f"  return tf.train.AdamOptimizer(1e-3).minimize("
              f"loss, var_list=params)\n\n" for i in range(n)))


def _classes_with_steps(n, trained):
  """One module: `n` Keras models, each with a base, a head and its own
  `train_step` training `trained` (`self` or `self.head`)."""
  return "import tensorflow as tf\n\n" + "".join(
      f"class M{i}(tf.keras.Model):\n"
      "  def __init__(self):\n"
      "    super().__init__()\n"
      "    self.base = tf.keras.layers.Dense(4)\n"
      "    self.head = tf.keras.layers.Dense(2)\n"
      "  def train_step(self, data):\n"
      "    x, y = data\n"
      "    with tf.GradientTape() as tape:\n"
      "      loss = self.compiled_loss(y, self.head(self.base(x)))\n"
      f"    grads = tape.gradient(loss, {trained}.trainable_variables)\n"
      "    self.optimizer.apply_gradients(zip(grads, "
      f"{trained}.trainable_variables))\n"
      "    return {'loss': loss}\n\n" for i in range(n))


def test_a_whole_scan_of_a_step_of_many_tapes_grows_linearly():
  # Was cubic: each step asked of every other step whether it never runs
  # and whether it only moves fast weights, each walking the function
  # (x37.9 for 4 times the tapes at 7e5d380).
  small, large = (scanned.scan_work(round_costs._tapes_of_one_step(n))
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)


@pytest.mark.parametrize("where", [
    "_flagged.py", "_groups.py", "_part_of_self.py", "_composed.py",
    "_left_out.py", "_wider_step.py", "_stacked.py"])
def test_the_gates_of_a_step_of_many_tapes_read_it_once(where):
  # Each was quadratic or worse at 7e5d380 (x15 to x69): per step, a
  # walk of the function or the class, or a read of every other step.
  small, large = (scanned.scan_work(round_costs._tapes_of_one_step(n), where)
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)


def test_a_whole_scan_of_a_function_of_many_tapes_grows_linearly():
  # Was quadratic: each step looked for the models called before it, and
  # for the models run under its own, over the whole function (x8.8).
  small, large = (scanned.scan_work(_tapes_of_one_function(n))
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)


@pytest.mark.parametrize("where", ["_hand_made.py", "_composed.py"])
def test_the_models_run_before_each_tape_are_read_once(where):
  # Quadratic at 7e5d380 (x15.6, x15.2): each step read every call of
  # its function for the models run before it, and each step training
  # the same model every call of it again for what it runs on.
  small, large = (scanned.scan_work(_tapes_of_one_function(n), where)
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)


def test_a_restored_part_is_read_once_per_module():
  # Was quadratic: each step walked its whole module for the `Saver`s and
  # the `restore`s (x15.2 at 7e5d380).
  small, large = (scanned.scan_work(_steps_beside_a_restored_part(n),
                                    "_restored.py") for n in (10, 40))
  assert large <= 6 * small, (small, large)


def test_a_whole_scan_beside_a_restored_part_grows_linearly():
  # x8.7 at 7e5d380: the walk above, and each function asking which
  # calls of the module name it.
  small, large = (scanned.scan_work(_steps_beside_a_restored_part(n))
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)


@pytest.mark.parametrize("trained", ["self", "self.head"])
def test_each_class_with_its_own_step_costs_the_same(trained):
  # x6.9 and x6.4 at 7e5d380: each step unparsed every other step's list
  # of the module, and read every other step of its class.
  small, large = (scanned.scan_work(_classes_with_steps(n, trained))
                  for n in (10, 40))
  assert large <= 5 * small, (small, large)


def test_what_the_shapes_find_is_unchanged():
  # The shapes above hold one head-only finding per class, one sampler
  # finding per function, and nothing else.
  assert scanned.found(_classes_with_steps(2, "self.head")) == [
      ("var-list-filter", 12), ("var-list-filter", 25)]
  assert scanned.found(_classes_with_steps(2, "self")) == []
  assert [idiom for idiom, _ in scanned.found(
      _steps_beside_a_restored_part(2))] == ["var-list-filter"] * 2
  assert scanned.found(round_costs._tapes_of_one_step(3)) == []
  assert scanned.found(_tapes_of_one_function(3)) == []


def _scoped_functions_and_a_worker(n, test):
  """One module: `n` functions each building under a literal scope, with
  no test of equality, and a worker class whose `__init__` opens the
  scope it is handed and builds its step under `test`."""
  return "import tensorflow as tf\n\n" + "".join(
      f"def block{i}(x):\n"
      f"  with tf.variable_scope('block{i}'):\n"
      "    return tf.layers.dense(x, 4)\n\n" for i in range(n)) + (
          "class AC(object):\n"
          "  def __init__(self, scope, trainer):\n"
          "    with tf.variable_scope(scope):\n"
          "      self.policy = tf.layers.dense(x, 2)\n"
          f"      {test}\n"
          "        grads = tf.gradients(self.loss, self.local_vars)\n"
          "        self.apply = trainer.apply_gradients(zip(grads, gv))\n")


def _guarded(text):
  """The scopes `guarded_scopes` reads of a project of one module, and
  the calls it makes in `_opened_scopes.py` (the functions it reads)."""
  project = _project.Project([_files.Source("a3c.py", text)])
  return scanned.calls_made(
      lambda: _worker_pairs.guarded_scopes(project), "_opened_scopes.py")


@pytest.mark.parametrize("test", [
    "if scope != 'global':", "if (scope\n          != 'global'):",
    "if 'global' != scope:"])
def test_only_functions_opening_and_testing_a_scope_are_read(test):
  # Was linear in the functions of a module holding one test of
  # equality: each was walked for the scope it opens (1.9 of 19 CPU s on
  # part thirty at 7e5d380); one without a scope call or without `==` or
  # `!=` in its text opens and tests none.
  (small, found), (large, again) = (
      _guarded(_scoped_functions_and_a_worker(n, test)) for n in (10, 40))
  assert found == again == {"global"}
  assert large == small, (small, large)


def test_a_worker_without_a_test_guards_no_scope():
  # The silent twin: the same class building its step for every scope.
  _, found = _guarded(_scoped_functions_and_a_worker(3, "if True:") +
                      "\nsame = x == y\n")
  assert found == set(), found
