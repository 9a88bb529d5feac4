"""The graph-mode tests again, in a process running TF1 behaviour.

`tf.compat.v1.disable_v2_behavior()` changes the whole process (no eager,
ref variables by default, v1 control flow), so it runs in a child.
"""

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent.parent
# Every file with graph-mode tests, and in them the tests that build a TF1
# graph and run it in a Session (the `tf1_graph` mode and the v1 entry
# points). This ran as a tox env of its own on 2.21 until that second
# install of TensorFlow filled a CI machine's disk (tox.ini).
GRAPH_TESTS = [
    "guarantees/test_conformance.py", "guarantees/test_partitioned.py",
    "guarantees/test_user_in_charge.py", "guarantees/test_sparse.py",
    "families/test_v1.py", "step/test_compact.py", "step/test_dynamic.py",
    "step/test_compact_elements.py", "families/test_fused_adam.py",
    "families/test_fused_sgd.py", "guarantees/test_patterns.py",
    "guarantees/test_threads.py", "guarantees/test_checkpoint_layout.py",
    "api/test_late_binding.py", "frozen/test_zero_one_masks.py",
    "step/test_compact_criteria.py", "frozen/test_criteria.py",
    "guarantees/test_compact_entry_points.py"]
SELECTED = ("tf1_graph or legacy_minimize or checkpoints_are_the_same or "
            "monitored_training_session or v1_saver or test_partitioned")


def test_graph_mode_tests_pass_under_disable_v2_behavior():
  result = subprocess.run(
      [sys.executable, "-m", "pytest", "-p", "tf1_behavior_plugin",
       "-p", "no:cacheprovider", "-k", SELECTED, *GRAPH_TESTS],
      cwd=HERE, capture_output=True, text=True, timeout=1200,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, check=False)
  summary = result.stdout.strip().splitlines()[-1] if result.stdout else ""
  assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
  assert " passed" in summary and "failed" not in summary, summary
  # Each file holds graph-mode tests that ran: none was left out by -k
  # (pytest prints a file's line only when a test of it runs).
  ran = {line.split()[0] for line in result.stdout.splitlines()
         if line.startswith(tuple(GRAPH_TESTS))}
  assert ran == set(GRAPH_TESTS), sorted(set(GRAPH_TESTS) - ran)
