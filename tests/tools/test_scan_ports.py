"""`tfpartial scan --diff`: the ports apply with `git apply` and `patch
-p1`, run, and hold the frozen bits where the originals drift."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.tools import scan_scripts

import processes

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}


def _run(args, folder, timeout=300):
  return processes.run(args, cwd=folder, timeout=timeout, env=ENV)


def _scan_diff(folder, name):
  return _run([sys.executable, "-m", "tfpartial", "scan", "--diff", name],
              folder, timeout=60)


@pytest.mark.parametrize("script, applier", [
    ("TF1_GRADS_MASK_FTRL", "git"),
    ("TF2_GRADS_MASK_ADAMW", "patch"),
    ("TF1_STOP_GRADIENT_MIX", "git"),
    ("TF1_SHADOW_RESTORE", "patch"),
    ("TF1_STOPPED_ROWS", "git"),
    ("TF2_GRADS_ZEROED_ROWS", "patch"),
])
def test_a_port_holds_what_the_original_lets_drift(tmp_path, script,
                                                   applier):
  if shutil.which(applier) is None:
    pytest.fail(f"{applier} is needed to test that the diff applies")
  name = "train.py"
  original = getattr(scan_scripts, script)
  (tmp_path / name).write_text(original)
  before = _run([sys.executable, name], tmp_path)
  assert before.returncode == 0, before.stderr[-2000:]
  assert before.stdout.strip() == "held: False", before.stdout
  diff = _scan_diff(tmp_path, name)
  assert diff.returncode == 1, diff.stderr
  assert diff.stdout.startswith("--- a/train.py\n+++ b/train.py\n")
  assert "port by hand" not in diff.stderr, diff.stderr
  (tmp_path / "port.diff").write_text(diff.stdout)
  command = (["git", "apply", "port.diff"] if applier == "git" else
             ["patch", "-p1", "-i", "port.diff"])
  applied = _run(command, tmp_path, timeout=60)
  assert applied.returncode == 0, applied.stdout + applied.stderr
  ported = (tmp_path / name).read_text()
  assert "import tfpartial" in ported
  # The file's own comments stay.
  for line in original.splitlines():
    if line.strip().startswith("#"):
      assert line in ported, line
  after = _run([sys.executable, name], tmp_path)
  assert after.returncode == 0, after.stderr[-2000:]
  assert after.stdout.strip() == "held: True", (ported, after.stdout)
  again = _scan_diff(tmp_path, name)
  assert again.stdout == "", again.stdout  # Nothing left to port.


def test_what_cannot_be_ported_is_listed_by_hand(tmp_path):
  (tmp_path / "a.py").write_text(
      "import tensorflow as tf\n"
      "def step(opt, x, loss, mask):\n"
      "  grads = tf.gradients(loss, [x])\n"
      "  return opt.apply_gradients([(g * mask, x) for g in grads])\n")
  result = _scan_diff(tmp_path, "a.py")
  assert result.returncode == 1 and result.stdout == ""
  assert result.stderr.startswith(
      "port by hand: a.py:4:32: grads-mask: the mask `mask` is not a "
      "constant"), result.stderr


STEP_WITH_AN_IMPORTED_MASK = """\
import numpy as np
import tensorflow as tf
from masks import MASK

w = tf.Variable(np.ones([2, 2], np.float32))
optimizer = tf.keras.optimizers.SGD(0.1)


def step(x):
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.matmul(x, w))
  grads = tape.gradient(loss, [w])
  grads[0] = grads[0] * MASK
  optimizer.apply_gradients(zip(grads, [w]))
"""


@pytest.mark.parametrize("masks, ported", [
    ("MASK = np.array([[1., 0.], [0., 1.]], np.float32)", True),
    ("MASK = {'w': 1.0, 'b': 0.0}['w']", True),
    ("MASK = tf.Variable([[1., 0.], [0., 1.]], trainable=False)", False),
    ("def MASK():\n  return 1.0", False),
])
def test_a_mask_imported_from_the_project_is_read_where_it_is_made(
    tmp_path, masks, ported):
  # A variable kept in another module may change while training: its
  # port would freeze what the mask was when the spec was made.
  (tmp_path / "masks.py").write_text(
      f"import numpy as np\nimport tensorflow as tf\n{masks}\n")
  (tmp_path / "train.py").write_text(STEP_WITH_AN_IMPORTED_MASK)
  result = _scan_diff(tmp_path, ".")
  assert result.returncode == 1, result.stderr
  assert ("tfpartial.freeze(" in result.stdout) == ported, result.stdout
  assert ("the mask `MASK` is not a constant" in result.stderr) != ported, (
      result.stderr)


def _diff_from(folder, paths, monkeypatch):
  import io  # pylint: disable=g-import-not-at-top
  from tfpartial._tools.scan import _main  # pylint: disable=g-import-not-at-top
  monkeypatch.chdir(folder)
  out, err = io.BytesIO(), io.StringIO()
  wrapper = io.TextIOWrapper(out, encoding="utf-8")
  assert _main.run(paths, "text", True, wrapper, err) == 1
  wrapper.flush()
  return out.getvalue(), err.getvalue()


def test_a_diff_of_a_subfolder_applies_from_where_the_user_stands(
    tmp_path, monkeypatch):
  for applier in ("git", "patch"):
    here = tmp_path / applier / "work"
    (here / "sub" / "dir").mkdir(parents=True)
    (here / "sub" / "dir" / "train.py").write_text(
        scan_scripts.TF1_GRADS_MASK_FTRL)
    if applier == "git":  # In a subfolder of a repository, as users are.
      subprocess.run(["git", "init", "-q", str(tmp_path / applier)],
                     check=True)
    diff, err = _diff_from(here, ["sub"], monkeypatch)
    assert diff.startswith(b"--- a/sub/dir/train.py\n"), diff[:80]
    assert "relative to" not in err
    command = (["git", "apply"] if applier == "git" else ["patch", "-p1"])
    subprocess.run(command, input=diff, cwd=here, check=True,
                   capture_output=True)
    assert "import tfpartial" in (here / "sub" / "dir" / "train.py"
                                  ).read_text()


def test_a_diff_of_a_folder_outside_says_where_to_apply_it(
    tmp_path, monkeypatch):
  here = tmp_path / "here"
  here.mkdir()
  for name in ("a", "b"):
    (tmp_path / name / "src").mkdir(parents=True)
    (tmp_path / name / "src" / "train.py").write_text(
        scan_scripts.TF1_GRADS_MASK_FTRL)
  diff, err = _diff_from(here, ["../a/src"], monkeypatch)
  # `..` and absolute paths are refused by both tools: the paths are
  # relative to the files' folder, and the note says how to apply there.
  assert diff.startswith(b"--- a/train.py\n"), diff[:80]
  assert (f"relative to {os.path.join('..', 'a', 'src')} (outside this "
          "folder)") in err, err
  for name, command in (("a", ["patch", "-p1", "-d", "../a/src"]),
                        ("b", ["git", "-C", "../b/src", "apply"])):
    subprocess.run(command, input=diff, cwd=here, check=True,
                   capture_output=True)
    assert "import tfpartial" in (tmp_path / name / "src" / "train.py"
                                  ).read_text()
