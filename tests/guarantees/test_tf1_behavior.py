"""The graph-mode tests again, in a process running TF1 behaviour.

`tf.compat.v1.disable_v2_behavior()` changes the whole process (no eager,
ref variables by default, v1 control flow), so it runs in a child.
"""

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent.parent
GRAPH_TESTS = ["guarantees/test_conformance.py",
               "guarantees/test_user_in_charge.py", "guarantees/test_sparse.py",
               "families/test_v1.py", "families/test_fused_adam.py"]


def test_graph_mode_tests_pass_under_disable_v2_behavior():
  result = subprocess.run(
      [sys.executable, "-m", "pytest", "-q", "-p", "tf1_behavior_plugin",
       "-p", "no:cacheprovider", "-k", "tf1_graph or legacy_minimize or "
       "checkpoints_are_the_same or monitored_training_session",
       *GRAPH_TESTS],
      cwd=HERE, capture_output=True, text=True, timeout=900,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, check=False)
  summary = result.stdout.strip().splitlines()[-1] if result.stdout else ""
  assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
  assert " passed" in summary and "failed" not in summary, summary
