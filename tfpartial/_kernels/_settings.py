"""The compiled kernel's settings: each read and checked here, and only here.

Three environment variables steer the kernel; none of them can make a
training step fail. A value that cannot be used is refused or clamped
with one line on stderr (once a process per value, not per step), and
the step runs without the kernel where it must:

- `TFPARTIAL_KERNELS`: `off`, `0`, `false`, `no` turn the kernel off;
  empty, `on`, `1`, `true`, `yes` leave it on. Another value leaves it
  on and is said once. Read at each step, so it can be changed in a
  running process.
- `TFPARTIAL_CACHE`: the cache folder (`_cache` and `_path` decide
  whether it is safe).
- `TFPARTIAL_BUILD_TIMEOUT`: seconds a build may take, default 180.
  A number above `MAX_TIMEOUT` (one day), `inf` included, is clamped to
  it; one that is not a positive number (`nan`, `0`, `-1`, `soon`) is
  refused: nothing is built, and the step runs without the kernel.

The lines go to stderr, not through `warnings`: a process run with
`-W error` would turn a warning into an exception in the middle of a
step.
"""

from __future__ import annotations

import os
import pathlib
import sys
import threading
from typing import Optional, Set, Tuple

SWITCH = "TFPARTIAL_KERNELS"
CACHE = "TFPARTIAL_CACHE"
TIMEOUT = "TFPARTIAL_BUILD_TIMEOUT"
# Far above what a build takes (docs/kernel.md), and still minutes, not ten.
DEFAULT_TIMEOUT = 180.0
# Longer than any build, and far below what the timers under
# `subprocess` can count (2**31 ms, about 24.8 days).
MAX_TIMEOUT = 86400.0
_OFF = ("0", "off", "false", "no")
_ON = ("", "1", "on", "true", "yes")
_said: Set[Tuple[str, str]] = set()
_SAYING = threading.Lock()


class Refused(ValueError):
  """A setting's value cannot be used; the message names it and why."""


def say(message: str) -> None:
  """Prints `tfpartial: message` on stderr; a closed stderr is no error."""
  try:
    print(f"tfpartial: {message}", file=sys.stderr, flush=True)
  except (OSError, ValueError):
    pass  # A closed stderr must not stop training either.


def say_once(name: str, value: str, message: str) -> None:
  """`say(message)` the first time this process sees `name`=`value`."""
  with _SAYING:
    if (name, value) in _said:
      return
    _said.add((name, value))
  say(message)


def enabled() -> bool:
  """Whether `TFPARTIAL_KERNELS` leaves the kernel on (read at each call)."""
  text = os.environ.get(SWITCH, "")
  value = text.strip().lower()
  if value in _OFF:
    return False
  if value not in _ON:
    say_once(SWITCH, text,
             f"{SWITCH}={text!r} is not one of {', '.join(_OFF)} (off) "
             f"or on, 1, true, yes: the compiled kernel stays on")
  return True


def cache_dir() -> pathlib.Path:
  """The kernel's cache folder, absolute: `$TFPARTIAL_CACHE`, else
  `$XDG_CACHE_HOME/tfpartial`, else `~/.cache/tfpartial`.

  Raises:
    RuntimeError: none is set and there is no home folder (`pathlib`).
  """
  explicit = os.environ.get(CACHE)
  if explicit:
    return pathlib.Path(os.path.abspath(explicit))
  base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
  return pathlib.Path(os.path.abspath(pathlib.Path(base) / "tfpartial"))


def build_timeout() -> float:
  """Seconds a build may take: `$TFPARTIAL_BUILD_TIMEOUT`, else 180.

  A value above `MAX_TIMEOUT` (`inf` too) is clamped to it, said once.

  Raises:
    Refused: the value is not a positive number.
  """
  text = os.environ.get(TIMEOUT, "")
  seconds = _seconds(text)
  if seconds is None:
    raise Refused(f"{TIMEOUT}={text.strip()!r} is not a positive number of "
                  f"seconds")
  if seconds > MAX_TIMEOUT:
    say_once(TIMEOUT, text,
             f"{TIMEOUT}={text.strip()!r} is more than the {MAX_TIMEOUT:g} s "
             f"(one day) a build may take: it is bounded at "
             f"{MAX_TIMEOUT:g} s")
    return MAX_TIMEOUT
  return seconds


def stale_after() -> float:
  """Seconds after which a build's temporary file is surely a dead
  process's: the longest a build of this process or of one with the
  default setting may take. Says nothing; a refused value counts as
  the default."""
  seconds = _seconds(os.environ.get(TIMEOUT, "")) or DEFAULT_TIMEOUT
  return max(DEFAULT_TIMEOUT, min(seconds, MAX_TIMEOUT))


def _seconds(text: str) -> Optional[float]:
  """The positive number of seconds `text` says (empty: the default), or
  None."""
  if not text.strip():
    return DEFAULT_TIMEOUT
  try:
    seconds = float(text)
  except ValueError:
    return None
  return seconds if seconds > 0 else None  # Not nan either.
