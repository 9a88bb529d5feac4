"""Building the compiled kernel: the compiler, bounded in time.

`build` compiles `_kernels/kernels.cc` (which includes the folder's
headers, one per optimizer family) against the headers of the
TensorFlow that runs (`tf.sysconfig`) into a cache folder `_native` has
checked, and publishes the library with its digest (`_cache`).
A compiler that fails, or runs longer than `TFPARTIAL_BUILD_TIMEOUT`
seconds (default 180: a build took 11 s on two cores here, 22 s with
other jobs on them), is recorded as failed, so later processes neither
build nor wait again; deleting `kernels-KEY.failed` retries.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import platform
import re
import signal
import subprocess
from typing import List, Optional, Tuple

import tensorflow as tf

from tfpartial._kernels import _cache

SOURCE = pathlib.Path(__file__).with_name("cc") / "kernels.cc"
TIMEOUT = "TFPARTIAL_BUILD_TIMEOUT"
# Far above the 11-22 s a build takes, and still minutes, not ten.
DEFAULT_TIMEOUT = 180.0


def cache_key(cxx: str) -> str:
  """What a build depends on: the source, TensorFlow, compiler, flags."""
  return hashlib.sha256("\0".join(
      [_sources(), tf.__version__, tf.sysconfig.get_include(), cxx,
       platform.machine()] + tf.sysconfig.get_compile_flags()
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
  """The compiler failed or timed out; the message says how."""


def build_timeout() -> float:
  """Seconds a build may take: `$TFPARTIAL_BUILD_TIMEOUT`, else 180.

  Raises BuildFailed when the variable is not a positive number.
  """
  text = os.environ.get(TIMEOUT, "").strip()
  if not text:
    return DEFAULT_TIMEOUT
  try:
    seconds = float(text)
  except ValueError:
    seconds = float("nan")
  if not seconds > 0:
    raise BuildFailed(f"{TIMEOUT}={text!r} is not a positive number of "
                      f"seconds")
  return seconds


def build(directory: pathlib.Path, cxx: str,
          timeout: Optional[float] = None) -> pathlib.Path:
  """Compiles the kernel into `directory` (a folder `load` checked).

  The library is renamed into place, then its digest record (see
  `_cache`), so several processes may build at once. Returns the
  library's path. Raises BuildFailed when the compiler fails or takes
  longer than `timeout` seconds (default `build_timeout()`): its process
  group is killed, and the failure recorded (`kernels-KEY.failed`)
  so later processes do not wait for it again.
  """
  directory, key = pathlib.Path(directory), cache_key(cxx)
  seconds = build_timeout() if timeout is None else timeout
  partial = _cache.temporary(directory, key, ".so")
  # No -ffast-math and no FMA contraction: every operation must be the
  # correctly rounded one, as in TensorFlow's own kernel.
  command = [cxx, "-shared", "-fPIC", "-O3", "-fno-math-errno",
             "-ffp-contract=off", "-w", str(SOURCE), "-o", str(partial),
             *tf.sysconfig.get_compile_flags(),
             *tf.sysconfig.get_link_flags()]
  try:
    failure = _compile(command, seconds)
    if failure is None:
      return _cache.publish(directory, key, partial)
  finally:
    if partial.exists():
      partial.unlink()
  _cache.record_failure(directory, key, failure)
  raise BuildFailed(failure)


def _compile(command: List[str], seconds: float) -> Optional[str]:
  """Runs the compiler for at most `seconds`: None, or what went wrong."""
  # A session of its own, so that a timeout kills the compiler's own
  # children (cc1plus, ld) too, and a Ctrl-C here does not leave them.
  process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors="replace",
                             start_new_session=True)
  try:
    _, errors = process.communicate(timeout=seconds)
  except subprocess.TimeoutExpired:
    _kill(process)
    return (f"{command[0]} did not finish within {seconds:g} s "
            f"(${TIMEOUT}, default {DEFAULT_TIMEOUT:g})")
  finally:
    if process.poll() is None:
      _kill(process)
  if process.returncode == 0:
    return None
  message = "\n".join(errors.strip().splitlines()[-5:])[-2000:]
  return message or f"{command[0]} exited with {process.returncode}"


def _kill(process: subprocess.Popen[str]) -> None:
  try:
    os.killpg(process.pid, signal.SIGKILL)
  except ProcessLookupError:
    pass
  try:
    process.communicate(timeout=5)
  except subprocess.TimeoutExpired:
    pass  # A child left the group and holds the pipes: do not wait on it.
