"""`tfpartial scan` after the review of the costs of a class of many
train steps and of a function or class of many stages: what the gates
read of the whole list of a module's steps (each function's steps, the
lists each function trains, the helpers two arms of an `if` call) is
read once per list, the other trainings beside a step are weighed only
until the question is answered, and what a stage reads of its whole
function (the scopes it builds, the loops around each fetch) once per
function, so a class holding many steps, each method with its own tape,
costs about the same per step however many there are."""

import pytest

import scanned


def _steps_of_one_class(n):
  """One Keras model: `n` heads, and a method per head, each with a tape
  of its own training that head alone."""
  return ("import tensorflow as tf\n\nclass M(tf.keras.Model):\n"
          "  def __init__(self):\n    super().__init__()\n" + "".join(
              f"    self.head{i} = tf.keras.layers.Dense(2)\n"
              for i in range(n)) + "".join(
                  f"  def step{i}(self, x, y):\n"
                  "    with tf.GradientTape() as tape:\n"
                  f"      loss = tf.reduce_mean(self.head{i}(x) - y)\n"
                  "    grads = tape.gradient(loss, "
                  f"self.head{i}.trainable_variables)\n"
                  "    self.opt.apply_gradients(zip(grads, "
                  f"self.head{i}.trainable_variables))\n"
                  "    return loss\n" for i in range(n)))


def _stages_of_one_class(n):
  """One TF1 trainer: `build` makes a step per scope (`block0`,
  `block1`, ...), each training that scope alone, and `fit` runs each
  stage's op in a loop of its own, one after another."""
  return ("import tensorflow as tf\n\nclass Trainer(object):\n"
          "  def build(self, loss):\n" + "".join(
              f"    self.vars{i} = [v for v in tf.trainable_variables() "
              f"if v.name.startswith('block{i}')]\n"
              f"    self.op{i} = tf.train.AdamOptimizer(1e-3).minimize("
              f"loss, var_list=self.vars{i})\n" for i in range(n)) +
          "  def fit(self, sess):\n" + "".join(
              f"    for _ in range(10):\n      sess.run(self.op{i})\n"
              for i in range(n)))


def test_a_whole_scan_of_a_class_of_many_steps_grows_linearly():
  # Was quadratic: each step weighed every other step of the module as
  # its other half, in full, twice, and each time read the lists of
  # every function anew (x9.6 for 4 times the steps at 81dee66).
  small, large = (scanned.scan_work(_steps_of_one_class(n))
                  for n in (40, 160))
  assert large <= 5 * small, (small, large)


@pytest.mark.parametrize("where", [
    "_other_half.py", "_twin_steps.py", "_step_gates.py", "_step_lists.py"])
def test_the_gates_of_a_class_of_many_steps_read_its_steps_once(where):
  # Each was quadratic at 81dee66 (x13.6 to x16.4): per step, every
  # other step weighed in full, every function's lists read again, and
  # the steps of the whole module searched for the step's function's.
  # `_step_lists` is where their grouping now runs: a cache missing every
  # time would show there, not in the three gates.
  small, large = (scanned.scan_work(_steps_of_one_class(n), where)
                  for n in (10, 40))
  assert large <= 6 * small, (small, large)


def test_a_class_of_many_stages_reads_the_scopes_it_builds_once():
  # Cubic at 81dee66 (x75 for 4 times the stages): each stage walked its
  # function for the scopes it builds, and each pair of stages again.
  # Since t61 a function opening no scope skips the walk of the tests
  # around its nodes (1,783 calls at 20 stages, 8,007 at 2aeb820): what
  # is left grows with the pairs' lookups of the read kept, one call
  # each (x6.7).
  small, large = (scanned.scan_work(_stages_of_one_class(n),
                                    "_stage_values.py") for n in (5, 20))
  assert large <= 8 * small, (small, large)


def test_a_pair_of_stages_looks_up_the_loops_around_its_fetches():
  # Cubic at 81dee66 (x30): each pair of stages searched every loop of
  # the function for each fetch; the pairs themselves stay (quadratic,
  # at most `_FETCHED` ops ordered per home).
  small, large = (scanned.scan_work(_stages_of_one_class(n),
                                    "_sequential.py") for n in (5, 20))
  assert large <= 16 * small, (small, large)


def test_what_the_shapes_find_is_unchanged():
  # A head per method, each its own training, is no finding; nor is a
  # class training its scopes in stages one after another.
  assert scanned.found(_steps_of_one_class(3)) == []
  assert scanned.found(_stages_of_one_class(3)) == []
