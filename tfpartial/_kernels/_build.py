"""Building the compiled kernel: the compiler, bounded in time and watched.

`build` compiles `_kernels/cc/kernels.cc` (which includes the folder's
headers, one per optimizer family) against the headers of the
TensorFlow that runs (`tf.sysconfig`) into a cache folder `_native` has
checked, and publishes the library with its digest (`_cache`). The
compiler runs under `_watchdog`, in a process group of its own: a timeout
(`TFPARTIAL_BUILD_TIMEOUT`, `_settings`; docs/kernel.md says how long a
build takes) kills the group, and so does the
death of this process. A compiler that fails or times out is recorded
with its cause (`_failures`), so later processes neither build nor wait
again for what would fail the same way.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import platform
import re
import signal
import subprocess
import sys
from typing import List, Optional, Tuple

import tensorflow as tf

from tfpartial._kernels import _cache
from tfpartial._kernels import _failures
from tfpartial._kernels import _isa
from tfpartial._kernels import _settings

SOURCE = pathlib.Path(__file__).with_name("cc") / "kernels.cc"
_WATCHDOG = pathlib.Path(__file__).with_name("_watchdog.py")


def cache_key(cxx: str, isa: Optional[_isa.InstructionSet] = None) -> str:
  """What a build depends on: the source, TensorFlow, compiler, flags
  (the instruction set's too: `_isa.chosen()` by default)."""
  isa = _isa.chosen() if isa is None else isa
  return hashlib.sha256("\0".join(
      [_sources(), tf.__version__, tf.sysconfig.get_include(), cxx,
       platform.machine(), *isa.flags] + tf.sysconfig.get_compile_flags()
      + tf.sysconfig.get_link_flags()).encode()).hexdigest()[:16]


def ops() -> Tuple[str, ...]:
  """The Python names of every op the source registers."""
  return tuple(re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
               for name in re.findall(r'REGISTER_OP\("(\w+)"\)',
                                      _sources()))


def _sources() -> str:
  """The text of every file the build reads from `_kernels/`, in order of
  name (each preceded by it)."""
  files = sorted(SOURCE.parent.glob("*.cc")) + sorted(
      SOURCE.parent.glob("*.h"))
  return "".join(f"// {path.name}\n{path.read_text()}" for path in files)


class BuildFailed(Exception):
  """The compiler failed or timed out; the message says how, `cause` why
  (a `_failures` cause)."""

  def __init__(self, message: str, cause: str = _failures.COMPILER,
               recorded: bool = False):
    super().__init__(message)
    self.cause, self.recorded = cause, recorded


def build(directory: pathlib.Path, cxx: str,
          timeout: Optional[float] = None,
          isa: Optional[_isa.InstructionSet] = None) -> pathlib.Path:
  """Compiles the kernel into `directory` (a folder `load` checked).

  The library is renamed into place, then its digest record (see
  `_cache`), so several processes may build at once. Returns the
  library's path. Raises BuildFailed when the compiler fails or takes
  longer than `timeout` seconds (default `_settings.build_timeout()`):
  its process group is killed, and the failure recorded with its cause
  (`kernels-KEY.failed`) so later processes do not wait for it again.
  `isa`: the instruction set to build for (`_isa.chosen()` by default).
  """
  isa = _isa.chosen() if isa is None else isa
  directory, key = pathlib.Path(directory), cache_key(cxx, isa)
  seconds = _settings.build_timeout() if timeout is None else timeout
  partial = _cache.temporary(directory, key, ".so")
  # No -ffast-math and no FMA contraction: every operation must be the
  # correctly rounded one, as in TensorFlow's own kernel.
  command = [cxx, "-shared", "-fPIC", "-O3", "-fno-math-errno",
             "-ffp-contract=off", *isa.flags, "-w", str(SOURCE), "-o",
             str(partial),
             *tf.sysconfig.get_compile_flags(),
             *tf.sysconfig.get_link_flags()]
  try:
    failure = _compile(command, seconds, partial)
    if failure is None:
      library = _cache.publish(directory, key, partial)
      _failures.forget(directory, key)  # A retry that worked.
      return library
  finally:
    if partial.exists():
      partial.unlink()
  cause, message = failure
  try:
    _failures.record(directory, key, cause, message, seconds)
  except OSError:  # The folder is full or read-only by now: said anyway.
    raise BuildFailed(message, cause) from None
  raise BuildFailed(message, cause, recorded=True)


def _compile(command: List[str], seconds: float, output: pathlib.Path
             ) -> Optional[Tuple[str, str]]:
  """Runs the compiler for at most `seconds`: None, or (the cause, what
  went wrong)."""
  # The watchdog stops the compiler when this process dies: it reads
  # end-of-file from `alive` once nothing holds the other end.
  alive, keep = os.pipe()
  try:
    process = subprocess.Popen(
        _watched(command, alive, output), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        errors="replace", pass_fds=(alive,), start_new_session=True)
  except BaseException:
    os.close(keep)
    raise
  finally:
    os.close(alive)
  try:
    _, errors = process.communicate(timeout=seconds)
  except subprocess.TimeoutExpired:
    _kill(process)
    return _failures.TIMEOUT, (
        f"{command[0]} did not finish within {seconds:g} s "
        f"(${_settings.TIMEOUT}, default {_settings.DEFAULT_TIMEOUT:g})")
  finally:
    if process.poll() is None:
      _kill(process)
    os.close(keep)
  if process.returncode == 0:
    return None
  message = "\n".join(errors.strip().splitlines()[-5:])[-2000:]
  message = message or f"{command[0]} exited with {process.returncode}"
  return _failures.cause_of(message), message


def _watched(command: List[str], alive: int, output: pathlib.Path
             ) -> List[str]:
  """`command` run by the watchdog (`-I`: nothing of the user's
  environment is imported), or as it is where there is no interpreter to
  run it with (an embedded Python)."""
  if not sys.executable:
    return command
  return [sys.executable, "-I", str(_WATCHDOG), str(os.getpid()),
          str(alive), str(output), *command]


def _kill(process: subprocess.Popen[str]) -> None:
  # The watchdog leads the group: this kills it, the compiler and the
  # compiler's own children (cc1plus, ld).
  try:
    os.killpg(process.pid, signal.SIGKILL)
  except ProcessLookupError:
    pass
  try:
    process.communicate(timeout=5)
  except subprocess.TimeoutExpired:
    pass  # A child left the group and holds the pipes: do not wait on it.
