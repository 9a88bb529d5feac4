"""Files from disk are untrusted input: every reader opens them here.

A spec file, the `.npy` masks it names, the checkpoints and Keras files
`verify` compares and the kernel cache's records and libraries may all be
someone else's, so one set of rules holds for all of them (and one set of
tests, `tests/frozen/test_files.py`):

- Only a regular file is read. A file is opened without blocking (a FIFO
  with no writer never hangs the open) and what was opened is checked
  (`fstat` of the descriptor, not `stat` of the name before): a FIFO, a
  device, a socket or a folder is refused. Files that TensorFlow opens by
  name itself are checked by name just before (`check_regular`); what
  changes between that check and TensorFlow's open is not covered.
- A name can be confined: to a folder (`confined`: no absolute path, no
  `..`, no symlink that leads out), or to an open folder without following
  a symlink at its end (`open_descriptor(..., folder=fd, follow=False)`).
- Reads are bounded (`read_bounded`): a file larger than the reader allows
  is refused unread, no read takes more than the file held when it was
  opened (plus one byte, to see that it grew), and a file whose size
  changes while it is read is refused.
- Each refusal is one `Refused` (a ValueError) whose `problem` says why in
  a few words; a reader puts its own context before it.

The scanner (`_tools/scan/`) reads source files its own way: it imports
nothing of the rest of tfpartial (a test checks).
"""

from __future__ import annotations

import errno
import io
import os
import pathlib
import stat
from typing import List, NoReturn, Optional, Tuple, Union

PathLike = Union[str, os.PathLike[str]]

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"))


class Refused(ValueError):
  """A file a reader may not read: `problem` says why (`no such file`,
  `it is a FIFO (named pipe), not a regular file`, ...); `missing` is
  whether there is no such file. The message is `cannot read PATH:
  PROBLEM`, or for a name `confined` refuses, `'NAME' PROBLEM`."""

  def __init__(self, path: PathLike, problem: str, missing: bool = False,
               message: Optional[str] = None):
    super().__init__(message or f"cannot read {os.fspath(path)}: {problem}")
    self.path, self.problem, self.missing = os.fspath(path), problem, missing


def _reason(error: OSError, follow: bool = True) -> str:
  """Why `error` stopped an open or a listing, in a few words."""
  if isinstance(error, FileNotFoundError):
    return "no such file"
  if isinstance(error, PermissionError):
    return "permission denied"
  if error.errno == errno.ELOOP and not follow:
    return "it is a symbolic link, which is not followed here"
  return str(error.strerror or error).lower()


def _refuse(path: PathLike, error: OSError, folder: Optional[int] = None,
            follow: bool = True) -> NoReturn:
  if error.errno == errno.ENXIO:
    try:  # What it is, for the message: a socket cannot be opened.
      _check_mode(path, os.stat(path, dir_fd=folder,
                                follow_symlinks=follow).st_mode)
    except OSError:
      pass
  raise Refused(path, _reason(error, follow),
                missing=isinstance(error, FileNotFoundError)) from None


def _check_mode(path: PathLike, mode: int) -> None:
  """Refused unless `mode` is a regular file's, saying what it is."""
  if not stat.S_ISREG(mode):
    kind = next((name for test, name in _KINDS if test(mode)), None)
    raise Refused(path, f"it is {kind}, not a regular file" if kind
                  else "it is not a regular file")


def open_descriptor(path: PathLike, folder: Optional[int] = None,
                    follow: bool = True) -> Tuple[int, os.stat_result]:
  """(descriptor, status) of the regular file `path`, opened for reading.

  Args:
    path: the file; relative to `folder` when that is given.
    folder: an open folder's descriptor, or None.
    follow: whether a symbolic link at the end of `path` is followed.

  Raises:
    Refused: the file cannot be opened, or is not a regular file.
  """
  flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
  try:
    descriptor = os.open(path, flags, dir_fd=folder)
  except OSError as error:
    _refuse(path, error, folder, follow)
  try:
    status = os.fstat(descriptor)
    _check_mode(path, status.st_mode)
  except BaseException:
    os.close(descriptor)
    raise
  return descriptor, status


def open_regular(path: PathLike) -> io.BufferedReader:
  """The regular file `path`, opened for reading (buffered, binary).

  Raises:
    Refused: the file cannot be opened, or is not a regular file.
  """
  descriptor, _ = open_descriptor(path)
  return os.fdopen(descriptor, "rb")


def read_bounded(descriptor: int, status: os.stat_result, path: PathLike,
                 limit: int, larger_than: str) -> bytes:
  """All the bytes of the file open at `descriptor`, from where it stands.

  Args:
    descriptor: an open regular file, `status` its `fstat`.
    path: how messages name it.
    limit: the most bytes the reader takes.
    larger_than: what `limit` is, for the message (`16 MiB, the most a
      spec file may be`).

  Raises:
    Refused: the file is larger than `limit` (then nothing is read), or its
      size changed while it was read.
  """
  size = status.st_size
  if size > limit:
    raise Refused(path, f"it is larger than {larger_than}")
  chunks, got = [], 0
  while got <= size:  # Never more than it held, and one byte to see more.
    chunk = os.read(descriptor, size + 1 - got)
    if not chunk:
      break
    chunks.append(chunk)
    got += len(chunk)
  if got != size:
    raise Refused(path, "it changed while it was read")
  return b"".join(chunks)


def check_regular(path: PathLike, missing_ok: bool = False) -> None:
  """Refused unless `path` (its target, for a symlink) is a regular file;
  a missing one is left for its reader to report if `missing_ok`. For files
  a library opens by name itself."""
  try:
    mode = os.stat(path).st_mode
  except OSError as error:
    if missing_ok and isinstance(error, FileNotFoundError):
      return
    _refuse(path, error)
  _check_mode(path, mode)


def check_folder(folder: PathLike, missing_ok: bool = False) -> List[str]:
  """The names in `folder`; ValueError where it cannot be listed (no names
  for a missing one if `missing_ok`)."""
  try:
    return os.listdir(folder)
  except FileNotFoundError:
    if missing_ok:
      return []
    raise ValueError(f"cannot read the folder {os.fspath(folder)}: no such "
                     "folder") from None
  except OSError as error:
    raise ValueError(f"cannot read the folder {os.fspath(folder)}: "
                     f"{_reason(error)}") from None


def identity(path: PathLike) -> Tuple[int, int]:
  """What tells two names of one file apart from two files: device and
  inode (0, 0 if it cannot be found)."""
  try:
    status = os.stat(path)
  except OSError:
    return (0, 0)
  return (status.st_dev, status.st_ino)


def confined(directory: pathlib.Path, name: str,
             within: str) -> pathlib.Path:
  """`directory / name`, resolved, refused unless it stays inside.

  Args:
    directory: the folder `name` is relative to.
    name: a relative path, as a file names it.
    within: how messages name the folder (`the spec file's folder`).

  Raises:
    Refused: `name` is absolute, has `..`, or leads out through a symlink.
  """
  def refuse(problem: str) -> NoReturn:
    raise Refused(name, problem, message=f"'{name}' {problem}")

  pure = pathlib.PurePath(name)
  if pure.is_absolute() or pure.anchor or name.startswith(("/", "\\")):
    refuse(f"is an absolute path; a name here is relative to {within}, "
           "which it may not leave")
  if ".." in pure.parts or ".." in name.replace("\\", "/").split("/"):
    refuse(f"leaves {within} (it has '..'); it must be inside that folder")
  folder = directory.resolve()
  path = (folder / pure).resolve()
  if path != folder and folder not in path.parents:
    refuse(f"leads outside {within} (through a symlink); it must be inside "
           "that folder")
  return path
