"""The compiled kernel's cache: a folder private to the user, checked files.

A shared library is code: whoever can write the file the process loads
runs code in it. So the cache is used only when the folder is the user's
own and nobody else can enter it (owner = this user, mode 0700 or
stricter), and a library only when it is a regular file of the user's,
not a symbolic link, not writable by group or others, and its bytes have
the SHA-256 written beside it when it was built (a truncated or
overwritten library never reaches the loader, where it would end the
process with a bus error). Everything is opened once (by `_files`, as
every file tfpartial reads) and checked through the open descriptor, and
the library is loaded through that descriptor
where the system allows (`/proc/self/fd`), so what is checked is what
runs even if a path changes meanwhile.

Files, per cache key (`_build.cache_key`):

- `kernels-KEY-DIGEST.so`: a library, named after its own digest;
- `kernels-KEY.sha256`: `sha256sum` format, the digest and the name
  of the library to load (written after the library, renamed into
  place, so a reader never sees a record without its library, nor a
  record of another library's bytes);
- `kernels-KEY.failed`: why the last build failed, and its cause
  (`_failures`);
- `.kernels-KEY-XXXXXXXX.so`, `.kernels-record-XXXXXXXX.tmp`: a build's
  files while it writes them (renamed into place); one left by a process
  killed meanwhile is removed once it is older than a build may take
  (`remove_stale`).

Before a build, `probe` writes and removes a file of `PROBE_BYTES` in the
folder, so that a full, read-only or unwritable cache is found before
10-30 s of compiling, not after.
"""

from __future__ import annotations

import errno
import hashlib
import os
import pathlib
import re
import stat
import tempfile
import time
from typing import Optional, Tuple

from tfpartial._frozen import _files
from tfpartial._kernels import _path

# The kernel is about 170 KB; anything far larger is not ours.
MAX_LIBRARY_BYTES = 64 << 20
# A digest record is ~100 bytes, a failure record (`_failures`) at most
# 2,000 characters of compiler output, which UTF-8 may make 8,000 bytes.
_MAX_RECORD_BYTES = 16384
_RECORD = "a cache record"
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# A build writes its library (about 600 KB) and two small records: the
# probe asks the file system for three times that before a compile.
PROBE_BYTES = 2 << 20
# What `temporary` names (mkstemp's eight random characters).
_TEMPORARY = re.compile(
    r"\.kernels-(?:[0-9a-f]{16}|record|probe)-[a-z0-9_]{8}\.(?:so|tmp)")

Unsafe = _path.Unsafe


class Unusable(Exception):
  """A cached file fails its check: build again, never load it."""


def supported() -> bool:
  """Whether this system has the owners and modes the checks need."""
  return os.name == "posix" and bool(_NOFOLLOW)


def open_private(directory: pathlib.Path) -> int:
  """Opens `directory` (made, mode 0700, if missing): a descriptor.

  Raises Unsafe when it cannot be made or opened, when a folder or link
  on its path is not to be trusted (`_path.checked`), or when it is not
  this user's own with mode 0700 or stricter. A folder that exists is
  never changed.
  """
  given = pathlib.Path(os.path.abspath(directory))
  real = _path.checked(given)
  try:
    # No link at the end either: `checked` resolved them all.
    folder = os.open(real, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
  except OSError as error:
    raise Unsafe(f"the cache folder {given} cannot be opened "
                 f"({error.strerror or error})") from None
  try:
    _check_folder(os.fstat(folder), given)
  except Unsafe:
    os.close(folder)
    raise
  return folder


def _check_folder(info: os.stat_result, directory: pathlib.Path) -> None:
  fix = "set TFPARTIAL_CACHE to a folder of your own"
  if not stat.S_ISDIR(info.st_mode):
    raise Unsafe(f"the cache folder {directory} is not a folder; {fix}")
  if info.st_uid != os.getuid():
    raise Unsafe(f"the cache folder {directory} belongs to uid "
                 f"{info.st_uid}, not to this user (uid {os.getuid()}), so "
                 f"tfpartial loads no library from it; {fix}")
  mode = stat.S_IMODE(info.st_mode)
  if mode & 0o077:
    raise Unsafe(f"the cache folder {directory} has mode {mode:04o}, not "
                 f"0700 (private to this user), so tfpartial loads no "
                 f"library from it; `chmod 700 {directory}` or {fix}")


def _check_file(info: os.stat_result, path: pathlib.Path) -> None:
  """Unusable unless a regular file (`_files` checked) is this user's and
  only this user may write it."""
  if info.st_uid != os.getuid():
    raise Unusable(f"{path} belongs to uid {info.st_uid}, not to this user "
                   f"(uid {os.getuid()})")
  mode = stat.S_IMODE(info.st_mode)
  if mode & 0o022:
    raise Unusable(f"{path} has mode {mode:04o}: group or others may write "
                   f"it")


def _open_checked(folder: int, directory: pathlib.Path, name: str,
                  limit: int = MAX_LIBRARY_BYTES,
                  what: str = "a kernel library") -> Tuple[int, bytes]:
  """(descriptor, all its bytes) of the regular file `name` in `folder`,
  not a symbolic link, after `_check_file`; at most `limit` bytes (what
  `what` may hold). Raises FileNotFoundError when there is no such file."""
  path = directory / name
  try:
    handle, info = _files.open_descriptor(name, folder=folder, follow=False)
  except _files.Refused as error:
    if error.missing:
      raise FileNotFoundError(errno.ENOENT, error.problem, str(path)
                              ) from None
    raise Unusable(f"cannot read {path}: {error.problem}") from None
  try:
    _check_file(info, path)
    data = _files.read_bounded(handle, info, path, limit,
                               f"{limit} bytes, the most {what} may hold")
  except _files.Refused as error:
    os.close(handle)
    raise Unusable(str(error)) from None
  except BaseException:
    os.close(handle)
    raise
  return handle, data


def _record_name(key: str) -> str:
  return f"kernels-{key}.sha256"


def open_library(folder: int, directory: pathlib.Path, key: str
                 ) -> Optional[Tuple[int, pathlib.Path]]:
  """The verified library for `key`: (open descriptor, path), or None
  when none was built. Raises Unusable when the record or the library
  fails a check (damaged, replaced, truncated, another user's)."""
  directory = pathlib.Path(directory)
  try:
    handle, text = _open_checked(folder, directory, _record_name(key),
                                 _MAX_RECORD_BYTES, _RECORD)
  except FileNotFoundError:
    return None
  os.close(handle)
  match = re.fullmatch(
      rb"([0-9a-f]{64})  (kernels-" + key.encode() + rb"-[0-9a-f]{16}\.so)\n",
      text)
  record = directory / _record_name(key)
  if match is None or match.group(2)[-19:-3] != match.group(1)[:16]:
    raise Unusable(f"{record} is not a digest record tfpartial wrote")
  digest, name = (group.decode() for group in match.groups())
  try:
    handle, data = _open_checked(folder, directory, name)
  except FileNotFoundError:
    raise Unusable(f"{directory / name}, named in {record}, is missing"
                   ) from None
  if hashlib.sha256(data).hexdigest() != digest:
    os.close(handle)
    raise Unusable(f"{directory / name} does not match the digest in "
                   f"{record} (damaged or changed since it was built)")
  return handle, directory / name


def publish(directory: pathlib.Path, key: str, built: pathlib.Path
            ) -> pathlib.Path:
  """Moves the library `built` (in `directory`) into place, then its
  record: each renamed into place, so readers see whole files only."""
  data = built.read_bytes()
  digest = hashlib.sha256(data).hexdigest()
  directory = pathlib.Path(directory)
  library = directory / f"kernels-{key}-{digest[:16]}.so"
  os.chmod(built, 0o700)
  os.replace(built, library)
  write_atomically(directory / _record_name(key),
                    f"{digest}  {library.name}\n")
  return library


def read_record(folder: int, directory: pathlib.Path, name: str
                ) -> Optional[Tuple[str, float]]:
  """(text, mtime) of the small record `name` after `_check_file`, or
  None when there is none. Raises Unusable when it fails a check."""
  try:
    handle, data = _open_checked(folder, pathlib.Path(directory), name,
                                 _MAX_RECORD_BYTES, _RECORD)
  except FileNotFoundError:
    return None
  try:
    return data.decode("utf-8", "replace"), os.fstat(handle).st_mtime
  finally:
    os.close(handle)


def temporary(directory: pathlib.Path, key: str, suffix: str
              ) -> pathlib.Path:
  """A new empty file of this process's in `directory`."""
  handle, path = tempfile.mkstemp(prefix=f".kernels-{key}-",
                                  suffix=suffix, dir=directory)
  os.close(handle)
  return pathlib.Path(path)


def write_atomically(path: pathlib.Path, text: str) -> None:
  """Writes `text` to `path`, renamed into place: whole or not at all."""
  partial = temporary(path.parent, "record", ".tmp")
  try:
    partial.write_text(text)
    os.replace(partial, path)
  finally:
    if partial.exists():
      partial.unlink()


def probe(directory: pathlib.Path) -> None:
  """Writes `PROBE_BYTES` to a new file in `directory`, synced, then
  removes it. Raises OSError as creating or writing it does (ENOSPC,
  EDQUOT, EROFS, EACCES, EFBIG)."""
  partial = temporary(directory, "probe", ".tmp")
  try:
    handle = os.open(partial, os.O_WRONLY | _NOFOLLOW)
    try:
      _fill(handle, PROBE_BYTES)
      # Some file systems (NFS) report a full disk only when written back.
      os.fsync(handle)
    finally:
      os.close(handle)
  finally:
    partial.unlink()


def _fill(handle: int, size: int) -> None:
  """Writes `size` zero bytes to `handle` (a seam: tests make it fail as
  a full disk does, which needs no root and no file system of its own)."""
  block = bytes(min(size, 1 << 16))
  while size > 0:
    size -= os.write(handle, block[:size])


def remove_stale(folder: int, older_than: float) -> None:
  """Removes the temporaries (`temporary`'s names) of this user's in
  `folder` last written more than `older_than` seconds ago: a build's,
  a probe's or a record's, left by a process killed meanwhile (a live
  build is stopped once it runs longer than that)."""
  now = time.time()
  try:
    names = os.listdir(folder)
  except OSError:
    return  # Cleaning up is a courtesy: it never stops a build.
  for name in names:
    if not _TEMPORARY.fullmatch(name):
      continue
    try:
      info = os.stat(name, dir_fd=folder, follow_symlinks=False)
      if (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
          and now - info.st_mtime > older_than):
        os.unlink(name, dir_fd=folder)
    except OSError:
      pass  # Renamed into place or removed meanwhile, or read-only.
