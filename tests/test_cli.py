"""`tfpartial demo` and `python -m tfpartial`: run, exit 0, print the numbers."""

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
  assert result.returncode == 2 and "usage: tfpartial" in result.stderr


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
