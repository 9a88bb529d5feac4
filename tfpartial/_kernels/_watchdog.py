"""Runs the compiler for `_build`, and stops it when the build's process dies.

A compiler is a tree of processes (the driver, `cc1plus`, `as`, `ld`).
When the Python process that started a build is killed (`kill -9`, the
OOM killer), nothing would stop that tree, which would run on without the
build's timeout and leave its half-written library in the cache. So the
build starts this script, in a process group of its own, and the script
starts the compiler in that group (everything it starts stays in it) and
waits. It stops the whole group, after removing the library being written,
as soon as either says the build's process is gone:

- the pipe the build holds open (descriptor `ALIVE`) reads end-of-file,
  which happens on every system, however the process ended;
- on Linux, the parent-death signal (`prctl(PR_SET_PDEATHSIG)`), which a
  forked copy of the build's process holding the pipe cannot delay.

`PR_SET_PDEATHSIG` on the compiler itself would not do: it reaches only
the process that set it, never `cc1plus` and `ld` below it, and setting
it between fork and exec (`preexec_fn`) is unsafe in a process with
threads. The script imports nothing but the standard library, and runs
as `python -I _watchdog.py PARENT ALIVE OUTPUT COMMAND...`; its exit
status is the compiler's.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from typing import Any, List, NoReturn

# From <linux/prctl.h>.
_PR_SET_PDEATHSIG = 1


def _stop(output: str) -> NoReturn:
  """Removes the library being written, then kills the process group:
  the compiler, all it started, and this script."""
  try:
    os.unlink(output)
  except OSError:
    pass
  os.killpg(0, signal.SIGKILL)
  os._exit(1)  # Not reached: the group's kill includes this process.


def _on_parent_death(output: str) -> None:
  signal.signal(signal.SIGTERM, lambda *_: _stop(output))
  if not sys.platform.startswith("linux"):
    return  # The pipe alone tells.
  try:
    libc: Any = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
  except (OSError, AttributeError):
    pass  # The pipe alone tells.


def _watch(alive: int, output: str) -> None:
  while True:
    try:
      if not os.read(alive, 1):
        break  # Every writer is gone: the build's process ended.
    except InterruptedError:
      continue
    except OSError:
      break
  _stop(output)


def main(argv: List[str]) -> int:
  """Runs `argv[4:]` until it exits or the process `argv[1]` dies."""
  parent, alive, output = int(argv[1]), int(argv[2]), argv[3]
  _on_parent_death(output)
  if os.getppid() != parent:  # It died before the signal was asked for.
    _stop(output)
  threading.Thread(target=_watch, args=(alive, output), daemon=True).start()
  try:
    compiler = subprocess.Popen(argv[4:], stdin=subprocess.DEVNULL)
  except OSError as error:
    print(f"{argv[4]}: {error.strerror or error}", file=sys.stderr)
    return 127
  code = compiler.wait()
  return code if code >= 0 else 128 - code


if __name__ == "__main__":
  sys.exit(main(sys.argv))
