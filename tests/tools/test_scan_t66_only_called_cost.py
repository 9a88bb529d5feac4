"""`_dropped.never_run` reads once a helper how the project names it
(`_only_called`), however many of its `return`s give back a write op:
a helper of many such branches costs about the same per branch however
many there are (counted calls, not time)."""

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned


def _pruner(n):
  return ("import tensorflow as tf\n\n"
          "def remask(layer, mask, i):\n" + "".join(
              f"  if i == {i}:\n"
              f"    return tf.assign(layer, layer * mask[{i}])\n"
              for i in range(n)) +
          "\ndef prune(model, masks):\n"
          "  remask(model.kernel, masks, 0)\n")


def _work(n):
  return scanned.calls_made(lambda: _scan.scan_project(
      [_files.Source("prune.py", _pruner(n))]), "_dropped.py")


def test_every_branch_dropped_stays_silent():
  assert _work(3)[1] == ([], [])


def test_how_a_helper_is_named_is_read_once():
  small, large = _work(10)[0], _work(40)[0]
  assert large <= 5 * small, (small, large)
