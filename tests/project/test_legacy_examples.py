"""Every script in legacy_examples/ runs and prints the result it promises."""

import os
import pathlib
import re
import sys

import pytest

import processes

EXAMPLES = pathlib.Path(__file__).parent.parent.parent / "legacy_examples"


def _run(name, *args):
  result = processes.run(
      [sys.executable, str(EXAMPLES / name), *args], timeout=300,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stdout


def test_every_example_is_tested():
  tested = {"freeze_first_element_tf1.py", "freeze_first_element_tf2.py",
            "train_diagonal_tf1.py", "train_diagonal_tf2.py",
            "slim_finetune_scopes.py", "shadow_and_stop_gradient.py",
            "monitored_session.py", "embedding_new_rows.py"}
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


@pytest.mark.parametrize("mode", [[], ["--eager"]], ids=["tf1", "eager"])
def test_slim_finetune_scopes(mode):
  out = _run("slim_finetune_scopes.py", "--steps", "10", *mode)
  assert out.splitlines() == [
      "features/weights unchanged (not in --trainable_scopes): True",
      "logits pretrained columns unchanged: True",
      "logits new columns trained: True"], out


def test_shadow_and_stop_gradient_answers_fail_where_tfpartial_holds():
  out = _run("shadow_and_stop_gradient.py", "--steps", "6")
  rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
  assert rows["shadow"][1:] == ["1", "6", "False"], out       # Stale copy.
  assert rows["stop_gradient"][-1] == "False", out            # l1 moved it.
  assert rows["tfpartial"][1:] == ["7", "0", "True"], out


def test_monitored_session_resumes_with_the_frozen_row(tmp_path):
  first = _run("monitored_session.py", "--checkpoint_dir", str(tmp_path),
               "--last_step", "5")
  second = _run("monitored_session.py", "--checkpoint_dir", str(tmp_path),
                "--last_step", "12")
  assert "started at step 0, stopped at step 5" in first
  assert "started at step 5, stopped at step 12" in second
  for out in (first, second):
    assert "row 0 bit-for-bit unchanged: True" in out
    assert "rows 1-2 trained: True" in out


@pytest.mark.parametrize("mode", [[], ["--eager"]], ids=["tf1", "eager"])
def test_embedding_new_rows(mode):
  out = _run("embedding_new_rows.py", "--steps", "5", *mode)
  assert "pretrained rows bit-for-bit unchanged: True" in out
  assert "new rows in the batch trained: True" in out
  assert "optimizer slot elements: 3200 (the table has 161600)" in out


def test_a_shadow_variable_added_to_a_running_job_cannot_resume(tmp_path):
  """docs/migration.md (MonitoredTrainingSession): the hand-made shadow is
  a global variable, so the Saver wants it: the shadow idiom, added to a
  job, cannot resume from the checkpoints the job wrote before; the port
  resumes from them. The idiom is the page's diff applied in reverse."""
  import test_docs  # pylint: disable=g-import-not-at-top
  page = test_docs.ROOT / "docs" / "migration.md"
  (diff,) = [block.code for block in test_docs.blocks_of(page)
             if block.lang == "diff" and
             "+++ legacy_examples/monitored_session.py" in block.code]
  _, _, idiom = test_docs.reverse_apply(
      diff, (EXAMPLES / "monitored_session.py").read_text())
  assert "shadow" in idiom
  (tmp_path / "idiom.py").write_text(idiom)
  run = str(tmp_path / "run")
  _run("monitored_session.py", "--checkpoint_dir", run, "--last_step", "5")
  result = processes.run(
      [sys.executable, str(tmp_path / "idiom.py"), "--checkpoint_dir", run,
       "--last_step", "8"], timeout=300,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  assert result.returncode != 0 and not result.stdout, result.stdout
  assert "NotFoundError: Key shadow not found in checkpoint" in result.stderr
  resumed = _run("monitored_session.py", "--checkpoint_dir", run,
                 "--last_step", "8")
  assert "started at step 5, stopped at step 8" in resumed
