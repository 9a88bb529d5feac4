"""`tfpartial scan` after the review of round thirty's costs: the facts
a new check reads of a whole class or function (what a class assigns to
each `self.x`, the `self.` calls and the tapes of a step's function) are
read once, so the work grows linearly with the class or function however
many writes or steps ask."""

import scanned


def _remasked_weights(n):
  """One class: `n` variables and masks, a method writing each variable
  times its mask, and a train step."""
  made = "".join(f"    self.w{i} = tf.Variable(tf.zeros([4, 4]))\n"
                 f"    self.m{i} = tf.constant(masks[{i}])\n"
                 for i in range(n))
  remask = "".join(f"    self.w{i}.assign(self.w{i} * self.m{i})\n"
                   for i in range(n))
  return ("import tensorflow as tf\n\nclass Pruned(tf.Module):\n"
          "  def __init__(self, masks):\n" + made +
          "  def remask(self):\n" + remask +
          "  def train(self, opt, loss):\n    return opt.minimize(loss)\n")


def _tapes_of_one_step(n):
  """One `train_step`: `n` heads, each trained by a tape of its own on
  the output of a base run before it."""
  return ("import tensorflow as tf\n\nclass M(tf.keras.Model):\n"
          "  def train_step(self, x):\n" + "".join(
              f"    f{i} = self.base{i}(x)\n"
              f"    with tf.GradientTape() as tape{i}:\n"
              f"      l{i} = tf.reduce_mean(self.head{i}(f{i}))\n"
              f"    g{i} = tape{i}.gradient(l{i}, "
              f"self.head{i}.trainable_variables)\n"
              f"    self.opt.apply_gradients(zip(g{i}, "
              f"self.head{i}.trainable_variables))\n" for i in range(n)))


def test_a_classs_assignments_are_read_once_for_its_writes():
  # Was quadratic: each write asking for an integer dtype walked the
  # whole class (x15.6 for 4 times the weights at aa5ea07).
  small, large = (scanned.scan_work(_remasked_weights(n), "_untrained.py")
                  for n in (30, 120))
  assert large <= 6 * small, (small, large)


def test_a_functions_tapes_and_calls_are_read_once_for_its_steps():
  # Was quadratic: each step walked its whole function for the parts run
  # before its tape, and again for the tape it reads (x15.5 at aa5ea07).
  small, large = (scanned.scan_work(_tapes_of_one_step(n), "_untaped.py")
                  for n in (15, 60))
  assert large <= 6 * small, (small, large)


def test_a_scan_of_many_remasked_weights_grows_linearly():
  # The whole scan of the same class (x13.9 at aa5ea07, x4.7 at 4e207c3).
  small, large = (scanned.scan_work(_remasked_weights(n))
                  for n in (30, 120))
  assert large <= 6 * small, (small, large)
