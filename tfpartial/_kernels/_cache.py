"""The compiled kernel's cache: a folder private to the user, checked files.

A shared library is code: whoever can write the file the process loads
runs code in it. So the cache is used only when the folder is the user's
own and nobody else can enter it (owner = this user, mode 0700 or
stricter), and a library only when it is a regular file of the user's,
not a symbolic link, not writable by group or others, and its bytes have
the SHA-256 written beside it when it was built (a truncated or
overwritten library never reaches the loader, where it would end the
process with a bus error). Everything is opened once and checked through
the open descriptor, and the library is loaded through that descriptor
where the system allows (`/proc/self/fd`), so what is checked is what
runs even if a path changes meanwhile.

Files, per cache key (`_build.cache_key`):

- `kernels-KEY-DIGEST.so`: a library, named after its own digest;
- `kernels-KEY.sha256`: `sha256sum` format, the digest and the name
  of the library to load (written after the library, renamed into
  place, so a reader never sees a record without its library, nor a
  record of another library's bytes);
- `kernels-KEY.failed`: why the last build failed or timed out.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
import stat
import tempfile
from typing import Optional, Tuple

# The kernel is about 170 KB; anything far larger is not ours.
MAX_LIBRARY_BYTES = 64 << 20
_MAX_RECORD_BYTES = 4096
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# Never block on a FIFO planted under a library's name.
_FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)


class Unsafe(Exception):
  """The folder may hold files other users wrote: never load from it."""


class Unusable(Exception):
  """A cached file fails its check: build again, never load it."""


def supported() -> bool:
  """Whether this system has the owners and modes the checks need."""
  return os.name == "posix" and bool(_NOFOLLOW)


def open_private(directory: pathlib.Path) -> int:
  """Opens `directory` (made, mode 0700, if missing): a descriptor.

  Raises Unsafe when it cannot be made or opened, or is not this user's
  own with mode 0700 or stricter. A folder that exists is never changed.
  """
  directory = pathlib.Path(os.path.abspath(directory))
  if not os.path.lexists(directory):
    try:
      _make(directory)
    except FileExistsError:
      pass  # Another process made it meanwhile: checked below.
    except OSError as error:
      raise Unsafe(f"the cache folder {directory} cannot be made "
                   f"({error.strerror or error})") from None
  try:
    folder = os.open(directory, os.O_RDONLY | _DIRECTORY)
  except OSError as error:
    raise Unsafe(f"the cache folder {directory} cannot be opened "
                 f"({error.strerror or error})") from None
  try:
    _check_folder(os.fstat(folder), directory)
  except Unsafe:
    os.close(folder)
    raise
  return folder


def _make(directory: pathlib.Path) -> None:
  # As XDG asks: a missing cache folder is made 0700 (the umask can only
  # take bits away), and so is its missing parent.
  try:
    os.mkdir(directory, 0o700)
  except FileNotFoundError:
    directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.mkdir(directory, 0o700)


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
  if not stat.S_ISREG(info.st_mode):
    raise Unusable(f"{path} is not a regular file")
  if info.st_uid != os.getuid():
    raise Unusable(f"{path} belongs to uid {info.st_uid}, not to this user "
                   f"(uid {os.getuid()})")
  mode = stat.S_IMODE(info.st_mode)
  if mode & 0o022:
    raise Unusable(f"{path} has mode {mode:04o}: group or others may write "
                   f"it")
  if info.st_size > MAX_LIBRARY_BYTES:
    raise Unusable(f"{path} holds {info.st_size} bytes, more than the "
                   f"{MAX_LIBRARY_BYTES} a kernel can")


def _open_checked(folder: int, directory: pathlib.Path, name: str,
                  limit: int = MAX_LIBRARY_BYTES) -> Tuple[int, bytes]:
  """(descriptor, first `limit` + 1 bytes) of `name` in `folder`, after
  `_check_file`. Raises FileNotFoundError when there is no such file."""
  path = directory / name
  try:
    handle = os.open(name, _FILE_FLAGS, dir_fd=folder)
  except FileNotFoundError:
    raise
  except OSError as error:
    kind = " (a symbolic link?)" if os.path.islink(path) else ""
    raise Unusable(f"{path} cannot be opened{kind}: "
                   f"{error.strerror or error}") from None
  try:
    _check_file(os.fstat(handle), path)
    chunks, size = [], 0
    while size <= limit:
      chunk = os.read(handle, limit + 1 - size)
      if not chunk:
        break
      chunks.append(chunk)
      size += len(chunk)
    data = b"".join(chunks)
  except BaseException:
    os.close(handle)
    raise
  return handle, data


def _record_name(key: str) -> str:
  return f"kernels-{key}.sha256"


def failure_path(directory: pathlib.Path, key: str) -> pathlib.Path:
  return pathlib.Path(directory) / f"kernels-{key}.failed"


def open_library(folder: int, directory: pathlib.Path, key: str
                 ) -> Optional[Tuple[int, pathlib.Path]]:
  """The verified library for `key`: (open descriptor, path), or None
  when none was built. Raises Unusable when the record or the library
  fails a check (damaged, replaced, truncated, another user's)."""
  directory = pathlib.Path(directory)
  try:
    handle, text = _open_checked(folder, directory, _record_name(key),
                                 _MAX_RECORD_BYTES)
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
  _write_atomically(directory / _record_name(key),
                    f"{digest}  {library.name}\n")
  return library


def record_failure(directory: pathlib.Path, key: str, message: str) -> None:
  """Records why building for `key` failed; later processes skip it."""
  _write_atomically(failure_path(directory, key), message)


def read_failure(folder: int, directory: pathlib.Path, key: str
                 ) -> Optional[str]:
  """The recorded failure for `key`, or None."""
  name = failure_path(directory, key).name
  try:
    handle, data = _open_checked(folder, pathlib.Path(directory), name,
                                 _MAX_RECORD_BYTES)
  except FileNotFoundError:
    return None
  except Unusable as error:
    return str(error)
  os.close(handle)
  return data.decode("utf-8", "replace").strip()


def temporary(directory: pathlib.Path, key: str, suffix: str
              ) -> pathlib.Path:
  """A new empty file of this process's in `directory`."""
  handle, path = tempfile.mkstemp(prefix=f".kernels-{key}-",
                                  suffix=suffix, dir=directory)
  os.close(handle)
  return pathlib.Path(path)


def _write_atomically(path: pathlib.Path, text: str) -> None:
  partial = temporary(path.parent, "record", ".tmp")
  try:
    partial.write_text(text)
    os.replace(partial, path)
  finally:
    if partial.exists():
      partial.unlink()
