"""`tfpartial scan`: which file named like a test is a test, read from
its syntax tree.

A file named `test_x.py` or `x_test.py` is a training script when it
runs something at top level (or under `if __name__ == "__main__":`) and
imports no test framework, bases no class on a framework's `TestCase`
or `Benchmark` and calls no test runner. Words in its docstring or its
comments decide nothing, and a `def test(sess):` beside a top-level run
is an evaluation. A `tf.test.Benchmark` run by `tf.test.main()`, and a
module of check methods that runs nothing at top level, stay test code.
"""

import textwrap

from test_scan_t60_lists37 import _NET, _RUN, _files, _found, _line

_HEADER, _BODY = _RUN.split("x = tf.placeholder", 1)
_BODY = "x = tf.placeholder" + _BODY.replace("OTHER\n", "").replace(
    "STEPS", "step_rnn, step_conv")


def _wrapped(name, opening, closing=""):
  """_RUN's graph and loop moved into a method of a class."""
  return {"net.py": _NET,
          name: _HEADER + "\n\n" + opening + textwrap.indent(
              _BODY, " " * 8) + closing}


_BENCHMARK = "class HeadBenchmark(tf.test.Benchmark):\n" \
    "    def benchmark_head(self):\n"
_MAIN = '\n\nif __name__ == "__main__":\n    tf.test.main()\n'


def test_a_benchmark_run_by_the_test_runner_is_a_test():
  files = _wrapped("head_benchmark_test.py", _BENCHMARK, _MAIN)
  assert _found(files) == []


def test_the_same_benchmark_code_in_a_script_is_found():
  # The twin: the code is found where it is no test.
  files = _wrapped("head_benchmark.py", _BENCHMARK, _MAIN)
  assert [path for path, _ in _found(files)] == ["head_benchmark.py"]


_CHECKS = "class HeadChecks(object):\n    def check_head(self):\n"
_MIXED = ("import tensorflow as tf\nfrom model_test import HeadChecks\n\n\n"
          "class T(HeadChecks, tf.test.TestCase):\n"
          "    def test_head(self):\n"
          "        self.check_head()\n")


def test_a_module_of_checks_a_test_mixes_in_is_a_test():
  files = _wrapped("model_test.py", _CHECKS)
  files["tests/other_test.py"] = _MIXED
  assert _found(files) == []


def test_a_docstring_naming_a_framework_leaves_a_script_a_script():
  files = _files(name="train_and_test.py")
  files["train_and_test.py"] = (
      '"""Fine-tunes a parameterized head (a unittest, a TestCase and '
      'pytest are not used).\n\nabsltest\n"""\n'
      "# unittest pytest TestCase\n" + files["train_and_test.py"])
  assert _found(files) == [("train_and_test.py", _line(
      files["train_and_test.py"], "vars_rnn = "))]


def test_an_evaluation_named_test_beside_a_top_level_run_is_a_script():
  tail = ("\n\ndef test(sess):\n"
          "    return sess.run(loss, {x: None, y: None})\n")
  files = _files(name="train_and_test.py", tail=tail)
  assert _found(files) == [("train_and_test.py", _line(
      files["train_and_test.py"], "vars_rnn = "))]


def test_a_run_under_main_with_no_framework_is_a_script():
  files = _wrapped("train_test.py", "def main():\n    if True:\n",
                   '\n\nif __name__ == "__main__":\n    main()\n')
  assert [path for path, _ in _found(files)] == ["train_test.py"]


def test_a_top_level_run_importing_a_framework_is_a_test():
  # The twin of the docstring: the framework imported, not named.
  files = _files(name="train_and_test.py")
  files["train_and_test.py"] = "import unittest\n" + files[
      "train_and_test.py"]
  assert _found(files) == []


def test_a_top_level_run_calling_the_tf_runner_is_a_test():
  files = _files(name="train_and_test.py", tail=(
      '\n\nif __name__ == "__main__":\n    tf.test.main()\n'))
  assert _found(files) == []


def test_test_functions_and_nothing_run_at_top_level_is_a_test():
  files = {"net.py": _NET, "model_test.py": _HEADER + "\n\n"
           "def test_trains():\n    if True:\n" + textwrap.indent(
               _BODY, " " * 8)}
  assert _found(files) == []
