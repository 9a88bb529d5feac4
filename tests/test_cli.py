"""`tfpartial demo` and `python -m tfpartial`: run, exit 0, print the numbers."""

import io
import os
import re
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st
import pytest

from tfpartial import _bench
from tfpartial import _native


def _tfpartial(*args):
  return subprocess.run(
      [sys.executable, "-m", "tfpartial", *args], capture_output=True,
      text=True, timeout=300, check=False,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})


def test_demo_answers_both_questions_and_shows_the_workarounds():
  result = _tfpartial("demo")
  assert result.returncode == 0, result.stderr[-3000:]
  out = result.stdout
  assert out.count("bit-identical in all three modes: yes") == 2, out
  assert len(re.findall(r"TF1 Session +x = \[1, 5\] +yes", out)) == 1, out
  assert len(re.findall(r"(TF2 eager|tf.function) +w = \[\[7, 2\], \[3, 6\]\] +yes", out)) == 2, out
  rows = dict(re.findall(r"^   (grads \* mask|stop_gradient mix|shadow \+ assign|tfpartial) +(.*)$", out, re.M))
  assert rows["tfpartial"].split() == ["held"] * 7, out
  assert "NaN" in rows["grads * mask"].split(), out
  assert rows["shadow + assign"].split()[-1] != "held", out


@pytest.mark.parametrize("args", [["--help"], ["demo", "--help"], ["verify", "--help"], ["bench", "--help"]])
def test_help(args):
  result = _tfpartial(*args)
  assert result.returncode == 0 and "usage: tfpartial" in result.stdout
  assert "%%" not in result.stdout  # argparse formats only help= with %.


def test_no_command_is_a_usage_error():
  result = _tfpartial()
  assert result.returncode == 2 and result.stderr == (
      "tfpartial: error: name a command: demo, verify or bench (see "
      "'tfpartial --help')\n")


def test_bench_quick_prints_every_case():
  result = _tfpartial("bench", "--quick", "--rounds", "7")
  assert result.returncode == 0, result.stderr[-3000:]
  rows = [line for line in result.stdout.splitlines() if line.startswith("(")]
  assert [row[:3] for row in rows] == [
      f"({case})" for case in "abcdefghi"], result.stdout
  for row in rows:
    plain, partial, ratio = map(float, re.findall(r"\s(\d+\.\d+)", row)[:3])
    assert plain > 0 and partial > 0
    # The median of per-round ratios, not the ratio of medians (and the
    # times are rounded to 0.01 ms), so within a factor of 2 of it.
    assert 0.5 * ratio < partial / plain < 2 * ratio, row
    spread = re.search(r"\s(\d+\.\d+)-(\d+\.\d+)\s", row)
    assert spread, row
    first, third = map(float, spread.groups())
    assert first <= ratio <= third, row
  assert re.search(r"optimizer state [\d.]+ MiB vs [\d.]+ MiB \(0\.\d+%\)",
                   rows[2]), rows[2]
  if _native.compiler() is not None:  # (a) and (b) used the kernel.
    for row in rows[:2]:
      assert row.split("  ")[0].endswith(", compiled kernel"), row
  assert "round" in result.stderr  # The progress line.


@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=30))
def test_bench_quartiles_stay_within_the_ratios_measured(ratios):
  first, third = _bench.quartiles(ratios)
  assert min(ratios) <= first <= third <= max(ratios)


@pytest.mark.parametrize("rounds", ["0", "-3", "many"])
def test_bench_rejects_a_round_count_that_is_not_positive(rounds):
  result = _tfpartial("bench", "--quick", "--rounds", rounds)
  assert result.returncode == 2
  assert "--rounds: must be a whole number >= 1" in result.stderr


# --- A command line that feels native (issue 16) ---------------------------


def _plain_env(**changes):
  """The environment without TF_CPP_MIN_LOG_LEVEL, as a user's shell has."""
  env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
  env.update(changes)
  return env


@pytest.mark.parametrize("args", [["--help"], ["demo", "--help"],
                                  ["verify", "--help"], ["bench", "--help"],
                                  ["verify", "only-one"], []])
def test_help_and_usage_errors_do_not_import_tensorflow(args):
  result = subprocess.run(
      [sys.executable, "-X", "importtime", "-m", "tfpartial", *args],
      capture_output=True, text=True, timeout=120, check=False,
      env=_plain_env())
  imported = {line.rsplit("|", 1)[-1].strip() for line in
              result.stderr.splitlines() if line.startswith("import time:")}
  assert "tfpartial.cli" in imported, result.stderr[-2000:]
  assert not {"tensorflow", "numpy", "keras"} & imported, sorted(imported)


@pytest.mark.parametrize("args, message", [
    ([], "tfpartial: error: name a command: demo, verify or bench (see "
         "'tfpartial --help')"),
    (["frob"], "tfpartial: error: unknown command 'frob': the commands are "
               "demo, verify and bench (see 'tfpartial --help')"),
    (["verify", "a"], "tfpartial verify: error: the following arguments are "
                      "required: after, --spec (see 'tfpartial verify --help')"),
    (["verify", "a", "b", "--spec", "s.json", "--frob"],
     "tfpartial: error: unrecognized arguments: --frob (see 'tfpartial "
     "--help')"),
    (["bench", "--rounds", "many"], "tfpartial bench: error: argument "
     "--rounds: must be a whole number >= 1, not 'many' (see 'tfpartial "
     "bench --help')"),
])
def test_a_usage_error_is_one_line_and_exit_2(capsys, args, message):
  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  assert cli.main(args) == 2
  out, err = capsys.readouterr()
  assert out == "" and err == message + "\n", err


def test_help_in_process_returns_0(capsys):
  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  assert cli.main(["verify", "--help"]) == 0
  assert "usage: tfpartial verify" in capsys.readouterr().out


def _verify_run(tmp_path, env):
  """`tfpartial verify` on a small TF2 checkpoint pair, in a new process."""
  script = (
      "import numpy as np, tensorflow as tf\n"
      "v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))\n"
      f"tf.train.Checkpoint(v=v).write({str(tmp_path / 'a' / 'ckpt')!r})\n"
      "v.assign_add([[0, 0, 0], [1, 1, 1]])\n"
      f"tf.train.Checkpoint(v=v).write({str(tmp_path / 'b' / 'ckpt')!r})\n")
  subprocess.run([sys.executable, "-c", script], check=True, timeout=300,
                 capture_output=True, env={**os.environ,
                                           "TF_CPP_MIN_LOG_LEVEL": "3"})
  (tmp_path / "spec.json").write_text('{"v": {"freeze": "0"}}')
  return subprocess.run(
      [sys.executable, "-m", "tfpartial", "verify", str(tmp_path / "a" / "ckpt"),
       str(tmp_path / "b" / "ckpt"), "--spec", str(tmp_path / "spec.json")],
      capture_output=True, text=True, timeout=300, check=False, env=env)


def test_a_command_prints_no_tensorflow_start_up_log(tmp_path):
  """Not oneDNN's or the CUDA stub's notes, not absl's banner, not cuInit;
  the progress goes to a pipe here, so plain lines without \\r."""
  result = _verify_run(tmp_path, _plain_env())
  assert result.returncode == 0, result.stdout + result.stderr
  assert result.stderr == "reading 1/1: v (2, 3)\n", result.stderr
  assert "OK: every frozen element of 1 variable(s)" in result.stdout


def test_the_users_own_log_level_is_kept(tmp_path):
  """TF_CPP_MIN_LOG_LEVEL=0: what TensorFlow logs while it loads still
  shows (whatever this machine's TensorFlow says; compared with a plain
  import of TensorFlow at the same level)."""
  plain = subprocess.run(
      [sys.executable, "-c", "import tensorflow"], capture_output=True,
      text=True, timeout=300, check=False,
      env=_plain_env(TF_CPP_MIN_LOG_LEVEL="0"))
  messages = [line.split("] ", 1)[1] for line in plain.stderr.splitlines()
              if re.match(r"[IWE]\d{4} .*\] ", line)]
  if not messages:
    pytest.skip("this TensorFlow logs nothing as it loads")
  result = _verify_run(tmp_path, _plain_env(TF_CPP_MIN_LOG_LEVEL="0"))
  assert result.returncode == 0, result.stderr
  for message in set(messages):
    assert message in result.stderr, (message, result.stderr)


def test_importing_tfpartial_sets_no_environment_variable():
  script = ("import os, tfpartial\n"
            "tfpartial.freeze  # Loads the library and TensorFlow.\n"
            "from tfpartial import cli\n"
            "print(os.environ.get('TF_CPP_MIN_LOG_LEVEL'))\n")
  result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=300, check=True,
                          env=_plain_env())
  assert result.stdout.strip() == "None", result.stdout


def test_a_bad_input_error_is_one_line_without_a_blank_line_first(tmp_path):
  (tmp_path / "spec.json").write_text('{"v": {"freeze": "0"}}')
  result = subprocess.run(
      [sys.executable, "-m", "tfpartial", "verify", str(tmp_path / "a"),
       str(tmp_path / "b"), "--spec", str(tmp_path / "spec.json")],
      capture_output=True, text=True, timeout=300, check=False,
      env=_plain_env())
  assert result.returncode == 2, result.stderr
  assert re.fullmatch(r"tfpartial verify: error: cannot read the checkpoint "
                      r"\S+/a: [^\n]+\n", result.stderr), result.stderr


class _Stream(io.StringIO):

  def __init__(self, terminal):
    super().__init__()
    self._terminal = terminal

  def isatty(self):
    return self._terminal


def test_progress_rewrites_one_line_only_on_a_terminal():
  from tfpartial import _progress  # pylint: disable=g-import-not-at-top
  for terminal in (True, False):
    stream = _Stream(terminal)
    line = _progress.Progress(stream)
    line.show("reading 1/2: a_long_name (3,)")
    line.show("round 5/9", transient=True)
    line.show("reading 2/2: b (2,)")
    line.close()
    if terminal:
      assert stream.getvalue() == (
          "\rreading 1/2: a_long_name (3,)"
          "\rround 5/9" + " " * 20 +
          "\rreading 2/2: b (2,)"
          "\r" + " " * 19 + "\r")
    else:
      assert stream.getvalue() == ("reading 1/2: a_long_name (3,)\n"
                                   "reading 2/2: b (2,)\n")


def test_only_tensorflows_records_below_the_level_are_dropped():
  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  text = ("WARNING: All log messages before absl::InitializeLog() is called "
          "are written to STDERR\n"
          "I0000 00:00:17.1 8364 port.cc:153] oneDNN custom operations\n"
          "W0000 00:00:17.2 8364 thing.cc:1] a warning\n"
          "E0000 00:00:17.3 8364 cuda_platform.cc:52] failed call to cuInit\n"
          "/x/y.py:3: UserWarning: from Python\n")
  assert cli._kept_records(text, 3) == "/x/y.py:3: UserWarning: from Python\n"
  assert cli._kept_records(text, 2).splitlines() == [
      "E0000 00:00:17.3 8364 cuda_platform.cc:52] failed call to cuInit",
      "/x/y.py:3: UserWarning: from Python"]
  assert cli._kept_records(text, 0) == text
