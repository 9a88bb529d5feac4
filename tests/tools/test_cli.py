"""`tfpartial demo` and `python -m tfpartial`: run, exit 0, print the numbers."""

import io
import os
import pathlib
import re
import subprocess
import sys
import time

from hypothesis import given
import numpy as np
from hypothesis import strategies as st
import pytest

import processes
from tfpartial import cli
from tfpartial._kernels import _native
from tfpartial._tools.bench import _bench
from tfpartial._tools.bench import _measure


_LEGACY = pathlib.Path(__file__).parent.parent.parent / "legacy_examples"


def _tfpartial(*args):
  return processes.run(
      [sys.executable, "-m", "tfpartial", *args], timeout=300,
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
      "tfpartial: error: name a command: demo, verify, bench or scan (see "
      "'tfpartial --help')\n")


# plain, tfpartial (each with its unit), ratio, middle half, count, cpu.
_NUMBERS = re.compile(
    r"\s(\d+(?:\.\d+)?) (ms|s|MiB)\s+(\d+(?:\.\d+)?) (ms|s|MiB)\s+"
    r"(-?\d+\.\d+)\s+(-?\d+\.\d+)-(-?\d+\.\d+)\s+(\d+)\s+"
    r"(\d+\.\d+|-)(?:;|$)")


def _rows(out):
  return [line for line in out.splitlines() if line.startswith("(")]


def test_bench_quick_runs_every_case_and_claims_nothing():
  result = _tfpartial("bench", "--quick", "--rounds", "7")
  assert result.returncode == 0, result.stderr[-3000:]
  out = result.stdout
  rows = _rows(out)
  letters = [row[1] for row in rows]
  # (j) four optimizers, (k) three frozen fractions, (m) ten memory
  # configurations, (n) five builds (three without Keras 2), (o) five
  # Keras and three v1 fractions, each an optimizer step and a whole one,
  # (r) Keras, v1 and Keras under a strategy.
  expected = ("abcdefghi" + "j" * 4 + "k" * 3 + "l" + "m" * 10)
  joined = "".join(letters)
  assert joined.startswith(expected) and joined.endswith(
      "o" * 16 + "r" * 3), out
  assert joined[len(expected):-19] in ("nnnnn", "nnn"), out
  # Tiny sizes say nothing of the machine: no target, no verdict.
  header = out.splitlines()[1]
  assert header.split() == ["case", "plain", "tfpartial", "ratio", "middle",
                            "half", "n", "cpu"], header
  assert "numbers mean nothing" in out.splitlines()[0]
  for row in rows:
    numbers = _NUMBERS.search(row)  # Nothing after the middle half.
    assert numbers, row
    plain, unit, partial, unit2, ratio, first, third, count, cpu = (
        numbers.groups())
    # --rounds is exact; (m) runs once in quick mode, (n) once.
    assert int(count) == {"m": 1, "n": 1}.get(row[1], 7), row
    assert (cpu == "-") == (row[1] in "mn"), row
    plain, partial, ratio, first, third = map(
        float, (plain, partial, ratio, first, third))
    assert unit == unit2 == {"m": "MiB", "n": "s"}.get(row[1], "ms"), row
    assert plain > 0 and partial > 0
    # The median of the per-round ratios, inside their middle half. How
    # it relates to the two medians beside it depends on the machine's
    # load (no timing is asserted in a unit test).
    assert first <= ratio <= third, row
  assert re.search(r"optimizer state [\d.]+ MiB vs [\d.]+ MiB \(0\.\d+%\)",
                   rows[2]), rows[2]
  if _native.compiler() is not None:  # (a) and (b) used the kernel.
    for row in rows[:2]:
      assert row.split("  ")[0].endswith(", compiled kernel"), row
  else:  # A kernel that did not run is never claimed.
    assert "compiled kernel" not in "".join(rows), out
  assert "round" in result.stderr  # The progress line.


def _closed_pipe():
  """A text stream to a pipe whose reader has left, as `| head -1` leaves."""
  read, write = os.pipe()
  os.close(read)
  return os.fdopen(write, "w")


def test_a_reader_that_leaves_ends_the_demo_as_it_ends_verify(monkeypatch,
                                                               capsys):
  """`tfpartial demo | head -1`: no traceback, the demo's own status."""
  with _closed_pipe() as stdout:
    monkeypatch.setattr(sys, "stdout", stdout)
    assert cli.main(["demo"]) == 0
  assert capsys.readouterr().err == ""


@pytest.mark.parametrize("stdout", ["closed pipe", "/dev/full"])
def test_scan_keeps_its_verdict_whatever_stdout_does(stdout):
  """In a process of its own: what Python holds for stdout at exit must
  not fail either."""
  command = [sys.executable, "-m", "tfpartial", "scan", str(_LEGACY)]
  if stdout == "/dev/full":
    with open("/dev/full", "w", encoding="utf-8") as full:
      result = subprocess.run(command, stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120, check=False)
    err = result.stderr
    assert "stdout (No space left on device)" in err, err
  else:
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    process.stdout.close()  # The reader leaves before the report.
    _, err = process.communicate(timeout=120)
    result = process
  assert result.returncode == 1, err  # Found: the legacy idioms.
  assert "Traceback" not in err and "Broken pipe" not in err, err
  assert "finding(s) in" in err, err


def test_bench_runs_the_cases_asked_for():
  result = _tfpartial("bench", "--quick", "--rounds", "2", "--case", "f, B")
  assert result.returncode == 0, result.stderr[-3000:]
  assert [row[:3] for row in _rows(result.stdout)] == ["(b)", "(f)"]


@pytest.mark.parametrize("cases", ["z", "b,,zz", "", "jk"])
def test_bench_rejects_a_case_that_is_not_one(cases):
  result = _tfpartial("bench", "--quick", "--case", cases)
  assert result.returncode == 2
  assert "--case: must be case letters from a to r" in result.stderr


def test_bench_memory_reports_the_child_s_peak_not_the_parent_s():
  from tfpartial._tools.bench import _memory  # pylint: disable=g-import-not-at-top
  ballast = np.ones(400 * 2**20, np.uint8)  # This process grows by 400 MiB,
  (child,) = _memory._child(["sgdm:plain"], 6_400)  # its child not.
  assert child < _memory.peak_bytes() - 300 * 2**20, ballast.size


def test_bench_gives_a_slow_step_fewer_rounds_unless_told(monkeypatch):
  monkeypatch.setattr(_measure, "BUDGET_SECONDS", 0.5)
  monkeypatch.setattr(_measure, "FEWEST", 3)
  slow = _measure.Case("(x) slow", lambda: time.sleep(0.02),
                     lambda: time.sleep(0.02), "<= 1")
  # At least 40 ms a round: at most 0.5 / 0.04 rounds, never under 3.
  assert 3 <= _measure.measure(slow, 200, io.StringIO(), exact=False).count <= 12
  assert _measure.measure(slow, 2, io.StringIO(), exact=True).count == 2


def test_bench_knows_the_cases_the_command_line_offers():
  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  assert cli._BENCH_CASES == _bench.LETTERS


def _result(ratio, limit, state=None, state_limit=None, unit="ms"):
  return _measure.Result(
      "(x) a case", plain=2.0, partial=2.0 * ratio, ratio=ratio,
      spread=(ratio - 0.01, ratio + 0.01), target=f"<= {limit}", unit=unit,
      limit=limit, state=state, state_limit=state_limit)


@pytest.mark.parametrize("result, met", [
    (_result(1.02, 1.03), "yes"),
    (_result(1.04, 1.03), "NO"),
    (_result(0.05, 0.1, state=(1, 1000), state_limit=0.01), "yes"),
    (_result(0.05, 0.1, state=(20, 1000), state_limit=0.01), "NO"),
    (_result(1.3, None), "-"),
])
def test_bench_says_whether_each_target_is_met(result, met):
  out = io.StringIO()
  _bench._print([result], out, quick=False)
  header, row = out.getvalue().splitlines()[:2]
  assert header.split()[-2:] == ["met", "target"]
  assert re.search(rf"\s{met}\s+{re.escape(result.target)}", row), row


def test_bench_quick_table_has_no_target_and_no_verdict():
  out = io.StringIO()
  _bench._print([_result(0.944, 0.1)], out, quick=True)
  assert "target" not in out.getvalue() and "<=" not in out.getvalue()
  assert " NO" not in out.getvalue() and " yes" not in out.getvalue()


@given(st.lists(st.floats(0.01, 100.0), min_size=1, max_size=30))
def test_bench_quartiles_stay_within_the_ratios_measured(ratios):
  first, third = _measure.quartiles(ratios)
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
    ([], "tfpartial: error: name a command: demo, verify, bench or scan (see "
         "'tfpartial --help')"),
    (["frob"], "tfpartial: error: unknown command 'frob': the commands are "
               "demo, verify, bench and scan (see 'tfpartial --help')"),
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
  processes.run([sys.executable, "-c", script], check=True, timeout=300,
                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
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
  from tfpartial._tools import _progress  # pylint: disable=g-import-not-at-top
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
