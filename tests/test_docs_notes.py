"""Every Python block of docs-notes/patterns.md runs as printed.

(migration.md's blocks are fragments of users' code and diffs; the tests
each of its entries names run them.)

A block whose first line is `# Requires: Keras 3` or `# Requires:
TensorFlow 2.15 (tf.estimator)` is skipped where that is missing. Blocks
run in this process, each in a namespace of its own; a block's `assert`s
are its claims.
"""

import pathlib
import re

import pytest
import tensorflow as tf

import helpers

NOTES = pathlib.Path(__file__).parent.parent / "docs-notes"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks():
  for path in [NOTES / "patterns.md"]:
    for number, match in enumerate(BLOCK.finditer(path.read_text()), 1):
      yield pytest.param(match.group(1), id=f"{path.stem}-{number}")


def _missing(code):
  first = code.splitlines()[0]
  if first == "# Requires: Keras 3" and not helpers.KERAS_3:
    return "Keras 3 API; this TensorFlow ships Keras 2"
  if first.startswith("# Requires: TensorFlow 2.15") and not hasattr(
      tf, "estimator"):
    return f"tf.estimator is not in TensorFlow {tf.__version__}"
  if first.startswith("# Requires:") and "Keras 3" not in first and (
      "2.15" not in first):
    raise AssertionError(f"unknown requirement: {first}")
  return None


def test_the_notes_have_examples():
  assert len(list(_blocks())) >= 6


@pytest.mark.parametrize("code", list(_blocks()))
def test_example_runs_as_printed(code):
  reason = _missing(code)
  if reason:
    pytest.skip(reason)
  exec(compile(code, "<docs-notes>", "exec"), {"__name__": "docs_notes"})  # pylint: disable=exec-used
