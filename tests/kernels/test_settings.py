"""No setting of the kernel breaks a training step (`_settings`).

A value that cannot be used is clamped or refused with one line naming
the setting and its value; the step runs, with the kernel or without it.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fakes
from tfpartial._kernels import _build
from tfpartial._kernels import _native

TIMEOUT = "TFPARTIAL_BUILD_TIMEOUT"
# A training step in a fresh process: Keras Adam on a partly frozen
# variable, twice; prints whether the kernel served and the frozen bits.
STEP = """
import json
import numpy as np
import keras
import tensorflow as tf
import tfpartial
from tfpartial._kernels import _native
x = tf.Variable(np.arange(8, dtype=np.float32))
spec = tfpartial.freeze(x, np.s_[:4])
optimizer = keras.optimizers.Adam(0.1)
for _ in range(2):
  spec.apply_gradients(optimizer, [(tf.ones(8), x)])
print(json.dumps({"loaded": _native.library() is not None,
                  "reason": _native.reason(),
                  "frozen": x.numpy()[:4].view(np.uint32).tolist()}))
"""


def _step_in_child(tmp_path, cxx, **env):
  environment = dict(os.environ, TFPARTIAL_CACHE=str(tmp_path / "cache"),
                     CXX=cxx, **env)
  environment.pop(_native.SWITCH, None)
  result = subprocess.run([sys.executable, "-c", STEP], cwd=tmp_path,
                          env=environment, capture_output=True, text=True,
                          timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  said = [line for line in result.stderr.splitlines()
          if line.startswith("tfpartial:")]
  return json.loads(result.stdout.splitlines()[-1]), said


@pytest.mark.parametrize("value", ["inf", "1e999", "2147484", "nan", "-1"])
def test_no_build_timeout_breaks_a_training_step(tmp_path, copier, value):
  # Before: inf, 1e999 and 2147484 raised OverflowError from every step.
  result, said = _step_in_child(tmp_path, copier, **{TIMEOUT: value})
  bits = np.arange(4, dtype=np.float32).view(np.uint32).tolist()
  assert result["frozen"] == bits
  if value in ("nan", "-1"):  # Refused: no build, a reason.
    assert not result["loaded"]
    assert result["reason"] == (f"not building kernels.cc: {TIMEOUT}="
                                f"{value!r} is not a positive number of "
                                f"seconds")
    assert said == [f"tfpartial: running without the compiled kernel: "
                    f"{result['reason']}"]
    assert fakes.runs(copier) == 0
  else:  # Clamped to a day, said once, built.
    assert result["loaded"], result
    assert said[0] == (f"tfpartial: {TIMEOUT}={value!r} is more than the "
                       f"86400 s (one day) a build may take: it is bounded "
                       f"at 86400 s"), said
    assert said[1].startswith("tfpartial: building its compiled kernels")
    assert len(said) == 2 and fakes.runs(copier) == 1


def test_a_timeout_too_large_is_clamped_and_said_once(
    tmp_path, monkeypatch, capfd):
  failing = fakes.fake_compiler(tmp_path, "fails", "exit 1")
  monkeypatch.setenv(TIMEOUT, "1e12")
  library, why = _native.load(failing, tmp_path / "cache")
  assert library is None
  assert why.startswith("building kernels.cc failed: "), why
  assert fakes.runs(failing) == 1
  err = capfd.readouterr().err
  assert err.count(f"{TIMEOUT}='1e12' is more than the 86400 s") == 1
  _native.load(failing, tmp_path / "cache")  # Recorded: not again ...
  assert f"{TIMEOUT}='1e12'" not in capfd.readouterr().err  # ... nor said.


def test_nothing_that_goes_wrong_in_loading_reaches_a_step(
    tmp_path, monkeypatch, failing):
  def broken(*args, **kwargs):
    raise OverflowError("timeout value is too large")

  monkeypatch.setattr(_build, "build", broken)
  monkeypatch.setattr(_native, "_loaded", [])
  monkeypatch.setenv("CXX", failing)
  monkeypatch.setenv("TFPARTIAL_CACHE", str(tmp_path / "cache"))
  assert _native.library() is None  # Before: OverflowError, every call.
  assert _native.reason() == ("the compiled kernel cannot be used: "
                              "OverflowError: timeout value is too large")
  assert _native.library() is None  # Decided once, not at each step.


def test_an_unknown_switch_value_is_said_once_and_leaves_the_kernel_on(
    monkeypatch, capfd):
  monkeypatch.setenv(_native.SWITCH, "of")
  assert _native.enabled() and _native.enabled()
  assert capfd.readouterr().err == (
      "tfpartial: TFPARTIAL_KERNELS='of' is not one of 0, off, false, no "
      "(off) or on, 1, true, yes: the compiled kernel stays on\n")
  for value in ("off", " OFF ", "0", "false", "no"):
    monkeypatch.setenv(_native.SWITCH, value)
    assert not _native.enabled()
  for value in ("", "on", "1", "true", "yes"):
    monkeypatch.setenv(_native.SWITCH, value)
    assert _native.enabled()
  assert capfd.readouterr().err == ""
