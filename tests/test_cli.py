"""`tfpartial demo` and `python -m tfpartial`: run, exit 0, print the numbers."""

import io
import os
import re
import subprocess
import sys
import time

from hypothesis import given
import numpy as np
from hypothesis import strategies as st
import pytest

from tfpartial import _bench
from tfpartial import _bench_measure
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
  assert result.returncode == 2 and "usage: tfpartial" in result.stderr


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
  # (j) four optimizers, (k) three frozen fractions, (m) eight memory
  # configurations, (n) five builds (three without Keras 2).
  expected = ("abcdefghi" + "j" * 4 + "k" * 3 + "l" + "m" * 8)
  assert "".join(letters).startswith(expected), out
  assert "".join(letters)[len(expected):] in ("nnnnn", "nnn"), out
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
    assert first <= ratio <= third, row
    if unit == "ms":
      # The median of per-round ratios, not the ratio of medians (and the
      # times are rounded to 0.01 ms), so within a factor of 2 of it.
      assert 0.5 * ratio < partial / plain < 2 * ratio, row
  assert re.search(r"optimizer state [\d.]+ MiB vs [\d.]+ MiB \(0\.\d+%\)",
                   rows[2]), rows[2]
  if _native.compiler() is not None:  # (a) and (b) used the kernel.
    for row in rows[:2]:
      assert row.split("  ")[0].endswith(", compiled kernel"), row
  assert "round" in result.stderr  # The progress line.


def test_bench_runs_the_cases_asked_for():
  result = _tfpartial("bench", "--quick", "--rounds", "2", "--case", "f, B")
  assert result.returncode == 0, result.stderr[-3000:]
  assert [row[:3] for row in _rows(result.stdout)] == ["(b)", "(f)"]


@pytest.mark.parametrize("cases", ["z", "b,,zz", "", "jk"])
def test_bench_rejects_a_case_that_is_not_one(cases):
  result = _tfpartial("bench", "--quick", "--case", cases)
  assert result.returncode == 2
  assert "--case: must be case letters from a to n" in result.stderr


def test_bench_memory_reports_the_child_s_peak_not_the_parent_s():
  from tfpartial import _bench_memory  # pylint: disable=g-import-not-at-top
  ballast = np.ones(400 * 2**20, np.uint8)  # This process grows by 400 MiB,
  (child,) = _bench_memory._child(["sgdm:plain"], 6_400)  # its child not.
  assert child < _bench_memory.peak_bytes() - 300 * 2**20, ballast.size


def test_bench_gives_a_slow_step_fewer_rounds_unless_told(monkeypatch):
  monkeypatch.setattr(_bench_measure, "BUDGET_SECONDS", 0.5)
  monkeypatch.setattr(_bench_measure, "FEWEST", 3)
  slow = _bench_measure.Case("(x) slow", lambda: time.sleep(0.02),
                     lambda: time.sleep(0.02), "<= 1")
  # At least 40 ms a round: at most 0.5 / 0.04 rounds, never under 3.
  assert 3 <= _bench_measure.measure(slow, 200, io.StringIO(), exact=False).count <= 12
  assert _bench_measure.measure(slow, 2, io.StringIO(), exact=True).count == 2


def test_bench_knows_the_cases_the_command_line_offers():
  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  assert cli._BENCH_CASES == _bench.LETTERS


def _result(ratio, limit, state=None, state_limit=None, unit="ms"):
  return _bench_measure.Result(
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
  first, third = _bench_measure.quartiles(ratios)
  assert min(ratios) <= first <= third <= max(ratios)


@pytest.mark.parametrize("rounds", ["0", "-3", "many"])
def test_bench_rejects_a_round_count_that_is_not_positive(rounds):
  result = _tfpartial("bench", "--quick", "--rounds", rounds)
  assert result.returncode == 2
  assert "--rounds: must be a whole number >= 1" in result.stderr
