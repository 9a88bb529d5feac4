"""A TF1 re-mask op returned by a helper is taken as never run only
where every call of the helper drops it: a helper with more callers
than `Flow.calls_of` follows (the cap) is not judged by the first ones
alone, so one caller past the cap that runs the op keeps the finding;
nor is a helper whose name is read otherwise than as the function of a
call the flow saw (an import alias, a bound name, a dict of helpers)."""

import pytest

import scanned


def _pruner(dropped, run):
  return ("import numpy as np\nimport tensorflow as tf\n\n"
          "def remask(layer, mask):\n"
          "  return tf.assign(layer, layer * tf.constant(mask))\n\n"
          "def prune(model, masks, sess):\n" + "".join(
              f"  remask(model.kernels[{i}], masks[{i}])\n"
              for i in range(dropped)) + (
                  "  sess.run(remask(model.head, masks[-1]))\n"
                  if run else ""))


@pytest.mark.parametrize("dropped", [2, 30, 120])
def test_a_run_past_many_dropped_calls_keeps_the_finding(dropped):
  assert scanned.found(_pruner(dropped, True)) == [("weight-remask", 5)]


@pytest.mark.parametrize("dropped", [2, 30, 120])
def test_every_call_dropped_stays_silent_below_the_cap(dropped):
  # Below the cap every call is seen: silent. Past it, not every call
  # is seen, so the finding is kept (the conservative answer).
  found = scanned.found(_pruner(dropped, False))
  assert found == ([] if dropped <= 24 else [("weight-remask", 5)])


def test_a_run_before_the_cap_keeps_the_finding():
  code = _pruner(0, True) + "".join(
      f"  remask(model.kernels[{i}], masks[{i}])\n" for i in range(30))
  assert scanned.found(code) == [("weight-remask", 5)]


_PRUNE = _pruner(1, False)


@pytest.mark.parametrize("files", [
    {"prune.py": _PRUNE, "train.py": (
        "from prune import remask as rm\n\ndef step(model, masks, sess):\n"
        "  sess.run(rm(model.head, masks[-1]))\n")},
    {"prune.py": _PRUNE, "train.py": (
        "import prune\n\ndef step(model, masks, sess):\n"
        "  sess.run(prune.remask(model.head, masks[-1]))\n")},
    {"prune.py": _PRUNE, "train.py": (
        "import prune\nfix = prune.remask\n\n"
        "def step(model, masks, sess):\n"
        "  sess.run(fix(model.head, masks[-1]))\n")},
    {"prune.py": _PRUNE + (
        "  ops = {'r': remask}\n"
        "  sess.run(ops['r'](model.head, masks[-1]))\n")},
], ids=["import-alias", "module-attribute", "bound-name", "dict"])
def test_a_helper_read_as_a_value_keeps_the_finding(files):
  # Called under another name, the op it returns may run.
  assert ("weight-remask", "prune.py", 5) in scanned.in_project(files)


def test_a_helper_only_called_and_dropped_stays_silent():
  assert scanned.in_project({"prune.py": _PRUNE}) == []
