"""The instruction set the kernels are built for, chosen at run time:
AVX2 where the CPU has it, else the baseline; the same bits either way."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import fakes
import helpers
from tfpartial._kernels import _build
from tfpartial._kernels import _inputs
from tfpartial._kernels import _isa
from tfpartial._kernels import _native

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
flags\t\t: fpu sse sse2 {extra}
bugs\t\t: spectre_v1

processor\t: 1
flags\t\t: fpu sse sse2 avx avx2
"""


@pytest.mark.parametrize("machine, extra, expected", [
    ("x86_64", "avx avx2 avx512f", _isa.AVX2),
    ("AMD64", "avx avx2", _isa.AVX2),
    ("x86_64", "avx", _isa.BASELINE),  # AVX without AVX2.
    ("x86_64", "", _isa.BASELINE),  # Only the first processor's flags count.
    ("aarch64", "avx avx2", _isa.BASELINE),
])
def test_avx2_is_chosen_where_the_cpu_has_it(monkeypatch, tmp_path, machine,
                                             extra, expected):
  cpuinfo = tmp_path / "cpuinfo"
  cpuinfo.write_text(CPUINFO.format(extra=extra))
  monkeypatch.setattr(_isa.platform, "machine", lambda: machine)
  monkeypatch.setattr(_isa, "_CPUINFO", str(cpuinfo))
  _isa.chosen.cache_clear()
  try:
    assert _isa.chosen() == expected
  finally:
    _isa.chosen.cache_clear()


def test_an_unreadable_cpuinfo_means_the_baseline(monkeypatch, tmp_path):
  monkeypatch.setattr(_isa.platform, "machine", lambda: "x86_64")
  monkeypatch.setattr(_isa, "_CPUINFO", str(tmp_path / "missing"))
  _isa.chosen.cache_clear()
  try:
    assert _isa.chosen() == _isa.BASELINE
  finally:
    _isa.chosen.cache_clear()


def test_each_instruction_set_has_its_build_and_its_flags(tmp_path):
  arguments = tmp_path / "arguments"
  cxx = tmp_path / "recorder"
  cxx.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {arguments}\nexit 1\n')
  cxx.chmod(0o755)
  keys, cache = set(), fakes.private(tmp_path / "cache")
  for isa in (_isa.BASELINE, _isa.AVX2):
    arguments.write_text("")
    with pytest.raises(_build.BuildFailed):
      _build.build(cache, str(cxx), timeout=60, isa=isa)
    given = arguments.read_text().splitlines()
    assert ("-mavx2" in given) == (isa is _isa.AVX2), given
    assert not [flag for flag in given if flag.startswith(("-march", "-mfma"))]
    keys.add(_build.cache_key(str(cxx), isa))
  assert len(keys) == 2


def test_the_build_loaded_is_the_one_chosen(compiled_kernel):
  assert _native.instruction_set() == _isa.chosen().name
  assert compiled_kernel.name.startswith(
      f"kernels-{_build.cache_key(_native.compiler())}-")


def test_the_avx2_and_the_baseline_builds_give_the_same_bits(
    compiled_kernel, tmp_path):
  """Every kernel, on NaN, Inf, subnormal and -0 values, float32 and
  float64, with threads and vector tails: the baseline build (made here in
  a fresh process) leaves the same bits as the AVX2 build this process
  loaded."""
  if _isa.chosen() is not _isa.AVX2:
    pytest.skip("this CPU has no AVX2: only the baseline build runs here")
  import isa_battery  # pylint: disable=g-import-not-at-top
  here = pathlib.Path(__file__).parent
  environment = dict(
      os.environ, TFPARTIAL_CACHE=str(fakes.private(tmp_path / "cache")),
      PYTHONPATH=os.pathsep.join([str(here.parent.parent), str(here.parent),
                                  str(here)]), TF_CPP_MIN_LOG_LEVEL="3")
  environment.pop(_native.SWITCH, None)
  result = subprocess.run(
      [sys.executable, str(here / "isa_battery.py"), str(tmp_path / "b.npz"),
       "baseline"], env=environment, capture_output=True, text=True,
      timeout=900, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.split() == ["baseline"]
  baseline = np.load(tmp_path / "b.npz")
  packed_from = _inputs.PACKED_FROM
  avx2 = isa_battery.run()
  # Left as it was: later tests in this process take unpacked small masks.
  assert _inputs.PACKED_FROM == packed_from
  assert sorted(avx2) == sorted(baseline.files) and len(avx2) > 40
  for name, values in avx2.items():
    helpers.assert_same_bits(values, baseline[name], name)
