"""Failed builds, recorded with their cause: which to retry, and when.

A build that cannot succeed should cost one process its build time, not
every process; a build that failed for a reason that goes away must be
tried again once it has. So `kernels-KEY.failed` holds the cause on its
first line (`cause: NAME`, then the timeout's seconds for `timeout`),
then what went wrong:

- `compiler`: the compiler exited with an error. Never retried for this
  key (another source, TensorFlow or compiler is another key): delete
  the record to retry.
- `load`: the library was built but does not load. Never retried.
- `timeout`: the compiler ran longer than the timeout in force. Retried
  when `TFPARTIAL_BUILD_TIMEOUT` is raised above it (the fix for a slow
  machine), not on a clock: a hung compiler would make a process wait
  the whole timeout again each time.
- `room`: the compiler could not write (no space left, a quota, a
  read-only file system, permission denied, a file size limit): the
  user can fix that without touching tfpartial, so it is retried
  `RETRY_AFTER` seconds after it was recorded.

A cache folder that cannot be written is found by a probe before
compiling (`_cache.probe`), so such a failure costs no compile and is not
recorded (nothing could be): each process probes again. A record without
a cause line (an earlier release's) is classified by its text.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import time
from typing import Optional

from tfpartial._kernels import _cache

COMPILER, LOAD, TIMEOUT, ROOM = "compiler", "load", "timeout", "room"
# Long enough that processes starting meanwhile do not each compile again
# for a disk that is still full, short enough to recover within a job.
RETRY_AFTER = 600.0
# What compilers and linkers print for the errors of `ROOM` (strerror's
# words for ENOSPC, EDQUOT, EROFS, EACCES and EFBIG).
_ROOM_WORDS = re.compile(
    "No space left on device|Disk quota exceeded|Read-only file system|"
    "Permission denied|File too large", re.IGNORECASE)
_CAUSE_LINE = re.compile(r"cause: (compiler|load|room|timeout(?: (\S+))?)\n")


@dataclasses.dataclass(frozen=True)
class Failure:
  """A recorded failure: its cause, what went wrong, when."""

  cause: str
  message: str
  recorded: float  # Seconds since the epoch (the record's mtime).
  seconds: Optional[float] = None  # The timeout, for `TIMEOUT`.

  def retry_reason(self, timeout: float, now: Optional[float] = None
                   ) -> Optional[str]:
    """Why this failure no longer holds a build back, or None while it
    does; `timeout` is the build timeout in force now."""
    if self.cause == TIMEOUT and self.seconds is not None:
      if timeout > self.seconds:
        return (f"the last build timed out after {self.seconds:g} s, and "
                f"the timeout is now {timeout:g} s")
      return None
    age = (time.time() if now is None else now) - self.recorded
    if self.cause == ROOM and not 0 <= age < RETRY_AFTER:
      return (f"the last build could not write its files ({self.message}), "
              f"{age / 60:.0f} min ago, which may have been fixed since")
    return None



def fix(cause: str, record: pathlib.Path,
        seconds: Optional[float] = None) -> str:
  """How the user gets a build again after a failure of `cause`
  recorded in `record` (`seconds`: the timeout, for `TIMEOUT`)."""
  if cause == TIMEOUT and seconds is not None:
    return (f"recorded in {record}; raise TFPARTIAL_BUILD_TIMEOUT above "
            f"{seconds:g} or delete it to retry")
  if cause == ROOM:
    return (f"recorded in {record}; retried {RETRY_AFTER / 60:.0f} min "
            f"after it, or delete it to retry")
  return f"recorded in {record}; delete it to retry"


def cause_of(message: str) -> str:
  """`ROOM` when the compiler's message says it could not write, else
  `COMPILER`."""
  return ROOM if _ROOM_WORDS.search(message) else COMPILER


def path(directory: pathlib.Path, key: str) -> pathlib.Path:
  """The failure record of `key` in `directory`."""
  return pathlib.Path(directory) / f"kernels-{key}.failed"


def record(directory: pathlib.Path, key: str, cause: str, message: str,
           seconds: Optional[float] = None) -> None:
  """Records why building `key` failed (OSError when it cannot)."""
  head = f"cause: {cause}" + (f" {seconds!r}" if cause == TIMEOUT else "")
  _cache.write_atomically(path(directory, key), f"{head}\n{message}")


def read(folder: int, directory: pathlib.Path, key: str
         ) -> Optional[Failure]:
  """The recorded failure of `key`, or None. A record that fails its
  checks (another user's, a link) is a `compiler` failure: kept, never
  retried, never trusted."""
  try:
    found = _cache.read_record(folder, directory, path(directory, key).name)
  except _cache.Unusable as error:
    return Failure(COMPILER, str(error), time.time())
  if found is None:
    return None
  text, recorded = found
  match = _CAUSE_LINE.match(text)
  if match is None:  # An earlier release's record: the message alone.
    message = text.strip()
    return Failure(cause_of(message), message, recorded)
  message = text[match.end():].strip()
  cause = match.group(1).split()[0]
  if cause != TIMEOUT:
    return Failure(cause, message, recorded)
  try:
    seconds: Optional[float] = float(match.group(2) or "nan")
  except ValueError:
    seconds = None
  if seconds is not None and not seconds > 0:
    seconds = None
  return Failure(TIMEOUT, message, recorded, seconds)


def forget(directory: pathlib.Path, key: str) -> None:
  """Removes the record of `key`, if any (a build is retried)."""
  try:
    os.unlink(path(directory, key))
  except FileNotFoundError:
    pass
