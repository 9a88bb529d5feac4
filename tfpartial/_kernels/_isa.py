"""The instruction set the kernels are built for, chosen at run time.

TensorFlow's own CPU kernels use AVX and, where the CPU has it, more; a
library built for the baseline of the architecture (x86-64: SSE2) runs
the same loops on 128-bit vectors. So where this CPU has AVX2 the
library is built with `-mavx2` (its own cache key: one build per
instruction set, made the first time a process on such a CPU needs it),
and elsewhere for the baseline, as before. The results are the same bits
either way: every operation stays a correctly rounded IEEE one (no
`-ffast-math`, no FMA contraction; AVX2 alone brings no FMA), the loops
have no reduction a wider vector would reorder, and a test compares the
two builds' outputs bit for bit (tests/kernels/test_isa.py).

The CPU's features are read from `/proc/cpuinfo` on Linux (bounded;
anything unexpected means the baseline); elsewhere the baseline serves.
"""

from __future__ import annotations

import dataclasses
import functools
import platform
from typing import FrozenSet, Tuple

# What `/proc/cpuinfo` may hold before its first "flags" line (a few KB).
_MAX_CPUINFO_BYTES = 1 << 20
_X86_64 = ("x86_64", "amd64")
_CPUINFO = "/proc/cpuinfo"


@dataclasses.dataclass(frozen=True)
class InstructionSet:
  """A build of the kernels: its name, the compiler flags that make it,
  and the CPU features it needs."""

  name: str
  flags: Tuple[str, ...]
  needs: FrozenSet[str] = frozenset()


BASELINE = InstructionSet("baseline", ())
AVX2 = InstructionSet("AVX2", ("-mavx2",), frozenset({"avx", "avx2"}))


@functools.lru_cache(maxsize=None)
def chosen() -> InstructionSet:
  """The best build this CPU runs: AVX2 on an x86-64 CPU that has it (and
  an OS that saves its registers, which Linux says by listing it), else
  the baseline."""
  if platform.machine().lower() not in _X86_64:
    return BASELINE
  features = cpu_features()
  return AVX2 if AVX2.needs <= features else BASELINE


def cpu_features() -> FrozenSet[str]:
  """The first processor's feature flags in `/proc/cpuinfo`, or none."""
  try:
    with open(_CPUINFO, "rb") as cpuinfo:
      text = cpuinfo.read(_MAX_CPUINFO_BYTES).decode("ascii", "replace")
  except OSError:
    return frozenset()
  for line in text.splitlines():
    name, _, value = line.partition(":")
    if name.strip() == "flags":
      return frozenset(value.split())
  return frozenset()
