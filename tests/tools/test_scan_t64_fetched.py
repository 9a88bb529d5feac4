"""`_fetched_out.only_fetched`: gradients kept on an object are taken for
numbers a session fetches only where every read of them IS such a fetch:
a project's own `run` that applies what it is given, a read by a getter
naming it (`getattr`, `builtins.getattr`, `operator.attrgetter`,
`__getattribute__`), through `vars(...)`/`__dict__`, or by a getter of
a built name in a module that may reach the model keep the step found
(one on `tf.nn`, or in a module not importing the model, does not); a
session's `run` keeps them silent, even beside a project function that
happens to be named `run`."""

import textwrap

import pytest

import scanned
from test_scan_fetched_gradients import _TF1 as _FETCHED

# test_scan_fetched_gradients' model, with more code after it
# (`more`) rather than in its constructor.
_TF1 = _FETCHED.replace("        {use}\n", "") + "{more}\n    "

SILENT = {
    "a session's run": "",
    "a project function named run that the fetch does not call": (
        "\ndef run(steps):\n  return [s + 1 for s in steps]\n"),
    "a getattr of another literal name": (
        "\ndef cost_of(model):\n  return getattr(model, 'cost')\n"),
}

# Modules beside `model.py` whose getter of a built name cannot reach
# the model: on an imported module, or in a module not importing it.
ELSEWHERE = {
    "layers.py": ("import tensorflow as tf\n\n"
                  "def dense(x, units, activation='relu'):\n"
                  "  return getattr(tf.nn, activation)("
                  "tf.layers.dense(x, units))\n"),
    "config.py": ("import argparse\n\n"
                  "def value(args, key):\n  return getattr(args, key)\n"),
}

FOUND = {
    "a project run that applies them": (
        "\ndef run(pairs):\n"
        "  return tf.train.AdamOptimizer(0.1).apply_gradients(pairs)\n"
        "\ndef build(x, y):\n  return run(MLP(x, y).grads)\n"),
    "a method named run that applies them": (
        "\nclass Trainer:\n  def run(self, pairs):\n"
        "    return tf.train.AdamOptimizer(0.1).apply_gradients(pairs)\n"
        "\n  def build(self, model):\n    return self.run(model.grads)\n"),
    "a getattr of the name": (
        "\ndef step(model):\n  pairs = getattr(model, 'grads')\n"
        "  return tf.train.AdamOptimizer(0.1).apply_gradients(pairs)\n"),
    "a getattr of a built name": (
        "\ndef step(model, which):\n  pairs = getattr(model, which + 's')\n"
        "  return tf.train.AdamOptimizer(0.1).apply_gradients(pairs)\n"),
    "operator.attrgetter of the name": (
        "\nimport operator\ndef step(model):\n"
        "  pairs = operator.attrgetter('grads')(model)\n"
        "  return tf.train.AdamOptimizer(0.1).apply_gradients(pairs)\n"),
    "__getattribute__ of the name": (
        "\ndef step(model):\n  pairs = model.__getattribute__('grads')\n"
        "  return tf.train.AdamOptimizer(0.1).apply_gradients(pairs)\n"),
    "builtins.getattr of the name": (
        "\nimport builtins\ndef step(model):\n"
        "  pairs = builtins.getattr(model, 'grads')\n"
        "  return tf.train.AdamOptimizer(0.1).apply_gradients(pairs)\n"),
    "the object's dict": (
        "\ndef step(model):\n  pairs = vars(model)['gr' + 'ads']\n"
        "  return tf.train.AdamOptimizer(0.1).apply_gradients(pairs)\n"),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_gradients_only_a_session_fetches_stay_silent(name):
  code = _TF1.format(more=SILENT[name].replace("\n", "\n    "))
  assert scanned.in_text(code, "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_gradients_read_otherwise_keep_their_step(name):
  code = _TF1.format(more=FOUND[name].replace("\n", "\n    "))
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", 20)]


@pytest.mark.parametrize("path", sorted(ELSEWHERE))
def test_a_getter_that_cannot_reach_the_model_stays_silent(path):
  model = textwrap.dedent(_TF1.format(more=""))
  found = scanned.in_project({"model.py": model, path: ELSEWHERE[path]})
  assert [f for f in found if f[0] == "var-list-filter"] == [], found


def test_a_getter_of_a_built_name_in_an_importer_keeps_the_step():
  model = textwrap.dedent(_TF1.format(more=""))
  use = ("import model\n\ndef pick(m, key):\n"
         "  return getattr(m, key)\n")
  found = scanned.in_project({"model.py": model, "train.py": use})
  assert [f for f in found if f[0] == "var-list-filter"] == [
      ("var-list-filter", "model.py", 20)], found
