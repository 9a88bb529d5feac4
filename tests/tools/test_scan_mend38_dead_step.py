"""`tfpartial scan` after review 38 of `_dead_step`: a whole step is
never run only on positive evidence (its one call sits in a comment or
in a string that parses as Python), never in a module that may run a
function by its name (`fire.Fire()`, `globals()[...]`,
`getattr(sys.modules[...], ...)`, `eval`), and what the module says of
its names is read once per file, however many functions it holds."""

import pytest

import scanned
import test_scan_part32_misses as part32

# The kinetics script's two steps, run by a dispatch of the module's own.
_DISPATCH = ("    import sys\n    import fire\n"
             + part32._I3D[:part32._I3D.index("    def train_network")]
             + """\
    if __name__ == "__main__":
        session_train(tf.train.GradientDescentOptimizer(0.1), None, None, "d")
        %s
    """)


@pytest.mark.parametrize("dispatch", [
    "fire.Fire()",
    "globals()[sys.argv[1]](None, None, None)",
    "getattr(sys.modules[__name__], sys.argv[1])(None, None, None)",
    "eval(sys.argv[1] + '(None, None, None)')",
    "locals()[sys.argv[1]](None, None, None)",
    "exec(sys.argv[1])",
], ids=["fire_no_argument", "globals", "getattr_of_the_module", "eval",
        "locals", "exec"])
def test_a_whole_step_a_script_may_run_by_its_name_is_silent(dispatch):
  assert scanned.found(_DISPATCH % dispatch) == []


def test_a_whole_step_no_line_calls_is_not_dead_without_evidence():
  assert scanned.found(_DISPATCH % "pass") == []


@pytest.mark.parametrize("off", [
    "# train_step(None, (None, None), None)",
    "'''train_step(None, (None, None), None)'''",
], ids=["comment", "string"])
def test_a_whole_step_whose_one_call_is_switched_off_is_dead(off):
  assert scanned.found(_DISPATCH % off) == [("var-list-filter", 22)]


def test_a_call_in_a_string_that_is_not_python_is_no_evidence():
  assert scanned.found(
      _DISPATCH % "print('run train_step( by hand')") == []


def test_the_kinetics_head_fine_tune_stays_found():
  off = "'''for example in data: train_step(i3d, example, opt)'''"
  assert scanned.found(part32._I3D % off) == [("var-list-filter", 20)]


def _steps_switched_off(n):
  """A script of `n` whole steps, each called only in a string, and a
  head fine-tune that its `__main__` runs."""
  return ("import tensorflow as tf\n" + "".join(
      f"\ndef step_{i}(net, x, y, optimizer):\n"
      "    with tf.GradientTape() as tape:\n"
      "        loss = tf.reduce_mean(tf.abs(net(x) - y))\n"
      "    variables = net.trainable_variables\n"
      "    gradients = tape.gradient(loss, variables)\n"
      "    optimizer.apply_gradients(zip(gradients, variables))\n"
      f"    '''step_{i}(net, x, y, optimizer)'''\n"
      for i in range(n)) +
          "\ndef head(optimizer, loss):\n"
          "    keys = tf.GraphKeys.TRAINABLE_VARIABLES\n"
          "    return optimizer.minimize(loss, var_list=tf.get_collection("
          "keys, scope='net/logits'))\n\n"
          "if __name__ == '__main__':\n"
          "    head(None, None)\n")


def test_the_names_of_a_script_are_read_once():
  n = 10
  small, large = (scanned.scan_work(_steps_switched_off(k), "_dead_step.py")
                  for k in (n, 4 * n))
  assert large <= 6 * small, (small, large)
