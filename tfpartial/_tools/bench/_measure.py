"""How `tfpartial bench` measures: a case, a row of results, the rounds.

A step row times the same training step with and without tfpartial in one
process. A round is one step of each, back to back, in alternating order;
its ratio compares two steps taken a few milliseconds apart, so the drift
of a shared, noisy machine mostly cancels. The row gives the median ratio
over the rounds and the middle half of them (first to third quartile),
which shows how noisy the machine was, and the same median ratio of the
process's CPU time. Rows measured by repeats instead (`repeated`: peak
memory, build times) give the median and middle half of the repeats.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import (Any, Callable, List, Optional, Protocol, Sequence,
                    TextIO, Tuple)

import tensorflow as tf

from tfpartial._tools import _progress


class Function(Protocol):
  """A step made by `function`: a `tf.function` of no arguments."""

  def __call__(self) -> Any: ...

  def get_concrete_function(self) -> Any:
    """Traces the step now (TensorFlow's ConcreteFunction)."""


def function(**options: Any) -> Callable[[Callable[[], Any]], Function]:
  """`tf.function(**options)`, the decorator of a case's step, typed.

  TensorFlow is untyped to mypy, so a step decorated with `tf.function`
  itself would be untyped.
  """
  decorator: Callable[[Callable[[], Any]], Function] = tf.function(**options)
  return decorator


@dataclasses.dataclass
class Case:
  """One comparison of steps: two step functions and, optionally, state."""

  name: str
  plain: Callable[[], object]
  partial: Callable[[], object]
  target: str
  limit: Optional[float] = None  # The target's largest ratio, if it has one.
  # (partial bytes, plain bytes) of the optimizers' state.
  state: Optional[Callable[[], Tuple[int, int]]] = None
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
  state: Optional[Tuple[int, int]] = None
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


def _time(step: Callable[[], object]) -> Tuple[float, float]:
  """Seconds for one step until its result is ready: wall-clock time, and
  the CPU time the process spent (all its threads)."""
  start, start_cpu = time.perf_counter(), time.process_time()
  result = step()
  if hasattr(result, "numpy"):
    result.numpy()
  return time.perf_counter() - start, time.process_time() - start_cpu


# By default a case measures for about this long at most (a slow step gets
# fewer rounds, never fewer than FEWEST), so that a full run of
# `tfpartial bench` stays near 15 minutes; `--rounds` asks for an exact
# count.
BUDGET_SECONDS = 45.0
FEWEST = 20


def measure(case: Case, rounds: int, progress: TextIO,
            exact: bool = True) -> Result:
  """`rounds` rounds of one plain and one tfpartial step, order alternating
  (unless `exact` is False: fewer if they would take over BUDGET_SECONDS)."""
  for _ in range(2):  # Trace, build and warm up both.
    case.plain(), case.partial()
  round_seconds = _time(case.plain)[0] + _time(case.partial)[0]
  if not exact:
    rounds = min(rounds, max(FEWEST, int(BUDGET_SECONDS / round_seconds)))
  plain_times, partial_times, ratios, cpu_ratios = [], [], [], []
  for index in range(rounds):
    if index % 10 == 0 or index == rounds - 1:
      show(progress, f"{case.name[:60]}: round {index + 1}/{rounds}",
           transient=index > 0)
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


def show(progress: TextIO, text: str, transient: bool = False) -> None:
  """Replaces the progress line with `text` (nothing, to clear it).

  Elsewhere than a terminal (`_progress`), a line is printed whole, once,
  unless it is `transient`, and clearing prints nothing.
  """
  line = _progress.Progress(progress)
  if line.terminal:
    print("\r" + " " * 79 + "\r" + text[:79], end="", file=progress,
          flush=True)
  elif text:
    line.show(text, transient=transient)


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
