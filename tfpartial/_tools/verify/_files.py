"""Checkpoint files as untrusted input: regular files only, never waited for.

A FIFO named like a checkpoint would hang a reader forever, and a device
(`/dev/zero` behind a symlink) would feed it without end; a folder that
cannot be read would surface as TensorFlow's "Failed to find any matching
files". So each file verify reads is opened here without blocking and
refused unless the opened descriptor is a regular file (`open_regular`:
the check is of what was opened, not of the name before opening). Files
that TensorFlow opens itself by name (a checkpoint's `.index`, `.data-*`
and `checkpoint` files) are checked by `check_regular` just before; what
changes between that check and TensorFlow's open is not covered.
"""

from __future__ import annotations

import io
import os
import stat
from typing import List, NoReturn, Tuple

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"))


def _fail(path: str, problem: str) -> NoReturn:
  raise ValueError(f"cannot read {path}: {problem}")


def _reason(error: OSError) -> str:
  if isinstance(error, PermissionError):
    return "permission denied"
  if isinstance(error, FileNotFoundError):
    return "no such file"
  return str(error.strerror or error).lower()


def _check_mode(path: str, mode: int) -> None:
  if not stat.S_ISREG(mode):
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    _fail(path, f"it is {kind}, not a regular file")


def open_regular(path: str) -> io.BufferedReader:
  """`path` opened for reading; ValueError unless it is a regular file."""
  try:
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_CLOEXEC", 0))
  except OSError as error:
    _fail(path, _reason(error))
  try:
    _check_mode(path, os.fstat(descriptor).st_mode)
  except ValueError:
    os.close(descriptor)
    raise
  return os.fdopen(descriptor, "rb")


def check_regular(path: str, missing_ok: bool = False) -> None:
  """ValueError unless `path` (its target, for a symlink) is a regular
  file; a missing one is left for its reader to report if `missing_ok`."""
  try:
    mode = os.stat(path).st_mode
  except FileNotFoundError:
    if missing_ok:
      return
    _fail(path, "no such file")
  except OSError as error:
    _fail(path, _reason(error))
  _check_mode(path, mode)


def check_folder(folder: str, missing_ok: bool = False) -> List[str]:
  """The names in `folder`; ValueError where it cannot be listed (no names
  for a missing one if `missing_ok`)."""
  try:
    return os.listdir(folder)
  except FileNotFoundError:
    if missing_ok:
      return []
    raise ValueError(f"cannot read the folder {folder}: no such folder"
                     ) from None
  except OSError as error:
    raise ValueError(f"cannot read the folder {folder}: "
                     f"{_reason(error)}") from None


def identity(path: str) -> Tuple[int, int]:
  """What tells two names of one file apart from two files: device and
  inode (0, 0 if it cannot be found)."""
  try:
    status = os.stat(path)
  except OSError:
    return (0, 0)
  return (status.st_dev, status.st_ino)
