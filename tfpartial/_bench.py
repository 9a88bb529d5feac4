"""`tfpartial bench`: the cost of partial freezing, as ratios on this machine.

Most rows time the same training step with and without tfpartial in one
process. A round is one step of each, back to back, in alternating order;
its ratio compares two steps taken a few milliseconds apart, so the drift
of a shared, noisy machine mostly cancels. Such a row gives the median
ratio over the rounds and the middle half of them (first to third
quartile), which shows how noisy the machine was. Rows (m) (peak memory,
a fresh process per configuration) and (n) (the time to build a train op
or trace a first step) repeat a few times instead, and give the median and
the middle half of the repeats.

The rows live in `_bench_cases` ((a)-(i), (l)), `_bench_steps` ((j), (k)),
`_bench_memory` ((m)) and `_bench_build` ((n)).
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from typing import Callable, Iterable, List, Optional, Sequence, TextIO, Tuple

import tensorflow as tf

# Every row's letter, in the order the table gives them.
LETTERS = "abcdefghijklmn"


@dataclasses.dataclass
class Case:
  """One comparison of steps: two step functions and, optionally, state."""

  name: str
  plain: Callable[[], object]
  partial: Callable[[], object]
  target: str
  limit: Optional[float] = None  # The target's largest ratio, if it has one.
  state: Optional[Callable[[], tuple]] = None  # (partial bytes, plain bytes)
  state_limit: Optional[float] = None  # Largest fraction of plain state.


@dataclasses.dataclass
class Result:
  """One row of the table."""

  name: str
  plain: float
  partial: float
  ratio: float
  spread: Tuple[float, float]  # First and third quartile of the ratios.
  target: str
  unit: str = "ms"  # Of `plain` and `partial`: "ms", "s" or "MiB".
  count: int = 0  # Rounds, or repeats, measured.
  # The median ratio of the CPU time the process spent: less sensitive to
  # other processes on a shared machine than wall-clock time.
  cpu_ratio: Optional[float] = None
  limit: Optional[float] = None
  state: Optional[tuple] = None
  state_limit: Optional[float] = None

  def met(self) -> Optional[bool]:
    """Whether the row meets its target; None if it has no number."""
    if self.limit is None:
      return None
    met = self.ratio <= self.limit
    if self.state and self.state_limit is not None:
      partial, plain = self.state
      met = met and partial <= self.state_limit * plain
    return met


def _time(step) -> Tuple[float, float]:
  """Seconds for one step until its result is ready: wall-clock time, and
  the CPU time the process spent (all its threads)."""
  start, start_cpu = time.perf_counter(), time.process_time()
  result = step()
  if hasattr(result, "numpy"):
    result.numpy()
  return time.perf_counter() - start, time.process_time() - start_cpu


# By default a case measures for about this long at most (a slow step gets
# fewer rounds, never fewer than _FEWEST), so that a full run stays near 15
# minutes; `--rounds` asks for an exact count.
_BUDGET_SECONDS = 45.0
_FEWEST = 20


def measure(case: Case, rounds: int, progress: TextIO,
            exact: bool = True) -> Result:
  """`rounds` rounds of one plain and one tfpartial step, order alternating
  (unless `exact` is False: fewer if they would take over _BUDGET_SECONDS)."""
  for _ in range(2):  # Trace, build and warm up both.
    case.plain(), case.partial()
  round_seconds = _time(case.plain)[0] + _time(case.partial)[0]
  if not exact:
    rounds = min(rounds, max(_FEWEST, int(_BUDGET_SECONDS / round_seconds)))
  plain_times, partial_times, ratios, cpu_ratios = [], [], [], []
  for index in range(rounds):
    if index % 10 == 0 or index == rounds - 1:
      show(progress, f"{case.name[:60]}: round {index + 1}/{rounds}")
    if index % 2 == 0:
      (plain, plain_cpu), (partial, partial_cpu) = (_time(case.plain),
                                                    _time(case.partial))
    else:
      (partial, partial_cpu), (plain, plain_cpu) = (_time(case.partial),
                                                    _time(case.plain))
    plain_times.append(plain)
    partial_times.append(partial)
    ratios.append(partial / plain)
    if plain_cpu > 0:
      cpu_ratios.append(partial_cpu / plain_cpu)
  show(progress, "")
  return Result(case.name, 1e3 * statistics.median(plain_times),
                1e3 * statistics.median(partial_times),
                statistics.median(ratios), quartiles(ratios), case.target,
                count=rounds, limit=case.limit,
                cpu_ratio=statistics.median(cpu_ratios) if cpu_ratios else None,
                state=case.state() if case.state else None,
                state_limit=case.state_limit)


def show(progress: TextIO, text: str) -> None:
  """Replaces the progress line with `text` (nothing, to clear it)."""
  print("\r" + " " * 79 + "\r" + text[:79], end="", file=progress, flush=True)


def repeated(name: str, plain: Sequence[float], partial: Sequence[float],
             ratios: Sequence[float], unit: str, target: str,
             limit: Optional[float] = None) -> Result:
  """A row from a few repeats (rows (m) and (n)): medians and quartiles."""
  return Result(name, statistics.median(plain), statistics.median(partial),
                statistics.median(ratios), quartiles(list(ratios)), target,
                unit=unit, count=len(ratios), limit=limit)


def quartiles(values: List[float]) -> Tuple[float, float]:
  """The first and third quartile, always within the values measured.

  ("inclusive": the default method extrapolates past the smallest and
  largest value when there are few, down to negative ratios.)
  """
  if len(values) < 2:
    return values[0], values[0]
  first, _, third = statistics.quantiles(values, n=4, method="inclusive")
  return first, third


def _rows(letter: str, quick: bool, rounds: int, exact: bool,
          progress: TextIO) -> Iterable[Result]:
  """The rows of case `letter`, each built just before it runs."""
  # pylint: disable=g-import-not-at-top
  from tfpartial import _bench_build
  from tfpartial import _bench_cases
  from tfpartial import _bench_memory
  from tfpartial import _bench_steps
  if letter == "m":
    return _bench_memory.rows(quick, progress)
  if letter == "n":
    return _bench_build.rows(quick, progress)
  builders = {**_bench_cases.cases(quick), **_bench_steps.cases(quick)}
  built = builders[letter]
  # Each case is built just before it runs and dropped after, so no case
  # runs beside another's variables, sessions or optimizer state.
  return (measure(build(), rounds, progress, exact)
          for build in (built if isinstance(built, list) else [built]))


def run(quick: bool = False, rounds: Optional[int] = None,
        cases: Optional[str] = None, out: TextIO = sys.stdout,
        progress: TextIO = sys.stderr) -> List[Result]:
  """Builds the cases (`cases`: letters, default all), measures them,
  prints the table."""
  exact = rounds is not None or quick
  rounds = rounds or (6 if quick else 200)
  letters = [letter for letter in LETTERS if cases is None or letter in cases]
  what = ("tiny sizes, to check that every case runs: the numbers mean "
          "nothing" if quick else "ratios tfpartial / plain")
  most = ("" if exact else
          f" (fewer for slow steps: about {_BUDGET_SECONDS:.0f} s a case)")
  print(f"tfpartial bench, TensorFlow {tf.__version__}, {rounds} rounds of "
        f"one plain and one tfpartial step each{most}; {what}", file=out)
  results = []
  for letter in letters:
    results.extend(_rows(letter, quick, rounds, exact, progress))
  _print(results, out, quick)
  from tfpartial import _native  # pylint: disable=g-import-not-at-top
  if _native.library() is None:
    print(f"Rows marked 'no compiled kernel' ran without tfpartial's "
          f"compiled kernel: {_native.reason()}", file=out)
  return results


def _value(value: float, unit: str) -> str:
  return f"{value:.0f} {unit}" if unit == "MiB" else f"{value:.2f} {unit}"


def _print(results: List[Result], out: TextIO, quick: bool) -> None:
  width = max([len(r.name) for r in results] + [4])
  columns = f"{'case':<{width}}  {'plain':>10}  {'tfpartial':>10}  " \
            f"{'ratio':>6}  {'middle half':>11}  {'n':>3}  {'cpu':>5}"
  print(columns if quick else f"{columns}  {'met':>3}  target", file=out)
  for r in results:
    spread = f"{r.spread[0]:.3f}-{r.spread[1]:.3f}"
    cpu = "-" if r.cpu_ratio is None else f"{r.cpu_ratio:.3f}"
    line = (f"{r.name:<{width}}  {_value(r.plain, r.unit):>10}  "
            f"{_value(r.partial, r.unit):>10}  {r.ratio:6.3f}  {spread:>11}  "
            f"{r.count:>3}  {cpu:>5}")
    if not quick:
      met = {True: "yes", False: "NO", None: "-"}[r.met()]
      line += f"  {met:>3}  {r.target}"
    if r.state:
      partial, plain = r.state
      line += (f"; optimizer state {partial / 2**20:.2f} MiB vs "
               f"{plain / 2**20:.1f} MiB ({100 * partial / plain:.2f}%)")
    print(line, file=out)
  if not quick:
    print("ratio: tfpartial / plain, the median over n rounds (steps) or n "
          "repeats ((m), (n)); (m) gives the peak memory above plain in "
          "sizes of the variable; cpu: the same ratio of the process's CPU "
          "time, steadier on a busy machine; met: whether the target holds",
          file=out)
