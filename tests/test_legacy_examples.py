"""Every script in legacy_examples/ runs and prints the result it promises."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).parent.parent / "legacy_examples"


def _run(name, *args):
  result = subprocess.run(
      [sys.executable, str(EXAMPLES / name), *args], capture_output=True,
      text=True, timeout=300, check=False,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stdout


def test_every_example_is_tested():
  tested = {"freeze_first_element_tf1.py", "freeze_first_element_tf2.py",
            "train_diagonal_tf1.py", "train_diagonal_tf2.py"}
  assert {p.name for p in EXAMPLES.glob("*.py")} == tested


@pytest.mark.parametrize("name", ["freeze_first_element_tf1.py",
                                  "freeze_first_element_tf2.py"])
def test_freeze_first_element(name):
  out = _run(name, "--steps", "60")
  x0, x1 = map(float, re.search(r"x = \[(\S+), (\S+)\] after 60 steps",
                                out).groups())
  assert x0 == 1.0 and abs(x1 - 5.0) < 1e-3, out
  assert "x[0] bit-for-bit unchanged: True" in out


def test_train_diagonal_tf1_stop_gradient_shrinks_tfpartial_holds():
  out = _run("train_diagonal_tf1.py", "--steps", "50")
  drift = dict(re.findall(r"(\w+): w = .*off-diagonal drift (\S+)", out))
  assert float(drift["stop_gradient"]) > 0.5, out
  assert float(drift["tfpartial"]) == 0.0, out


def test_train_diagonal_tf2_mask_goes_nan_tfpartial_holds():
  out = _run("train_diagonal_tf2.py", "--steps", "50")
  assert re.search(r"grads \* mask: w = \[\[nan, nan\].*unchanged: False", out)
  assert re.search(r"tfpartial: w = \[\[[0-9.]+, 2\.0\], \[3\.0, [0-9.]+\]\].*"
                   r"unchanged: True", out), out
