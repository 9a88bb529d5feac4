"""`tfpartial bench`: the cost of partial freezing, as ratios on this machine.

Each row compares the same work with and without tfpartial, in one
process (`_measure` says how). The rows live in `_cases`
((a)-(i), (l)), `_steps` ((j), (k)), `_sparse` ((o), compact element
masks), `_compact_rows` ((r), compact rows with repeated ids and under a
strategy), `_memory` ((m), peak
memory, a fresh process per configuration) and `_build` ((n), the
time to build a train op or trace a first step); this module runs the ones
asked for and prints the table.
"""

from __future__ import annotations

import math
import sys
from typing import Callable, Dict, Iterable, List, Optional, TextIO, Union

import tensorflow as tf

from tfpartial._kernels import _native
from tfpartial._tools.bench import _build
from tfpartial._tools.bench import _cases
from tfpartial._tools.bench import _compact_rows
from tfpartial._tools.bench import _measure
from tfpartial._tools.bench import _memory
from tfpartial._tools.bench import _sparse
from tfpartial._tools.bench import _steps
from tfpartial._tools.bench._measure import Case
from tfpartial._tools.bench._measure import Result

# Every row's letter, in the order the table gives them.
LETTERS = "abcdefghijklmnor"


def _rows(letter: str, quick: bool, rounds: int, exact: bool,
          progress: TextIO) -> Iterable[Result]:
  """The rows of case `letter`, each built just before it runs."""
  if letter == "m":
    return _memory.rows(quick, progress)
  if letter == "n":
    return _build.rows(quick, progress)
  builders: Dict[str, Union[Callable[[], Case], List[Callable[[], Case]]]] = {
      **_cases.cases(quick), **_steps.cases(quick), **_sparse.cases(quick),
      **_compact_rows.cases(quick)}
  built = builders[letter]
  # Each case is built just before it runs and dropped after, so no case
  # runs beside another's variables, sessions or optimizer state.
  return (_measure.measure(build(), rounds, progress, exact)
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
  budget = _measure.BUDGET_SECONDS
  most = ("" if exact
          else f" (fewer for slow steps: about {budget:.0f} s a case)")
  print(f"tfpartial bench, TensorFlow {tf.__version__}, {rounds} rounds of "
        f"one plain and one tfpartial step each{most}; {what}", file=out)
  results: List[Result] = []
  for letter in letters:
    results.extend(_rows(letter, quick, rounds, exact, progress))
  _print(results, out, quick)
  if _native.library() is None:
    print(f"Rows marked 'no compiled kernel' ran without tfpartial's "
          f"compiled kernel: {_native.reason()}", file=out)
  return results


def _value(value: float, unit: str) -> str:
  """A time to 0.01, or to two significant digits under 0.1 (a quick
  build takes milliseconds); MiB whole.

  >>> _value(1.284, "s"), _value(0.0041, "s"), _value(1800.4, "MiB")
  ('1.28 s', '0.0041 s', '1800 MiB')
  """
  if unit == "MiB":
    return f"{value:.0f} {unit}"
  digits = 2 if not 0 < value < 0.1 else 1 - math.floor(math.log10(value))
  return f"{value:.{digits}f} {unit}"


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
