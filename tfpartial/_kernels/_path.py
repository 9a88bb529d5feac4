"""The cache folder's path: every folder on the way must be trusted too.

A private cache folder is only as private as the folders above it: whoever
may rename or replace an entry of a folder on the way can swap the cache
for a folder of their choosing (a symbolic link to the user's `~/.ssh`,
say, where tfpartial would then write its files). So, as OpenSSH's
`StrictModes` checks the folders above `authorized_keys`, `checked` walks
the path from `/` down, one component at a time, without following
anything it has not checked:

- every folder above the cache belongs to this user or to root, and
  group and others cannot write it, unless it is sticky (`/tmp`, mode
  1777, owned by root: there only an entry's owner can rename or remove
  it);
- a symbolic link on the way belongs to this user or to root (a link
  another user made, in `/tmp` say, points wherever they chose); it is
  followed, and what it points to is checked the same way, component by
  component (at most `MAX_LINKS` links);
- a missing folder is made, mode 0700, so it is this user's.

The cache folder itself is checked when it is opened (`_cache`): this
user's, mode 0700. After the walk nobody but root and this user can
change what the path names, so what was checked is what is used.
"""

from __future__ import annotations

import errno
import os
import pathlib
import stat
from typing import List

# As the kernel's own bound on links followed in one lookup (ELOOP).
MAX_LINKS = 40
_FIX = "set TFPARTIAL_CACHE to a folder of your own"


class Unsafe(Exception):
  """The folder may hold files other users wrote: never load from it."""


def checked(directory: pathlib.Path) -> pathlib.Path:
  """The folder `directory` names, with no symbolic link in it, after
  checking every folder and link on the way (missing ones made 0700).

  Args:
    directory: an absolute path.

  Returns:
    The path of the folder itself, each link on the way replaced by what
    it points to (the last component may not exist yet as a folder:
    opening it checks it).

  Raises:
    Unsafe: a component is not this user's or root's, others may write
      a folder on the way, or a missing folder cannot be made.
  """
  given = pathlib.Path(directory)
  here = pathlib.Path(given.anchor or "/")
  _check_ancestor(os.lstat(here), here, given)
  pending: List[str] = list(given.parts[1:])
  links = 0
  while pending:
    name = pending.pop(0)
    if name in ("", "."):
      continue
    if name == "..":  # `here` holds no link: its parent is its parent.
      here = here.parent
      continue
    path = here / name
    info = _lstat_or_make(path, given)
    if stat.S_ISLNK(info.st_mode):
      _check_owner(info, path, given, "the symbolic link")
      links += 1
      if links > MAX_LINKS:
        raise Unsafe(f"the path of the cache folder {given} has more than "
                     f"{MAX_LINKS} symbolic links; {_FIX}")
      target = pathlib.PurePath(os.readlink(path))
      if target.is_absolute():
        here = pathlib.Path(target.anchor)
      pending = list(target.parts[1 if target.is_absolute() else 0:]) + (
          pending)
      continue
    if pending:  # A folder above the cache folder.
      _check_ancestor(info, path, given)
    here = path
  return here


def _lstat_or_make(path: pathlib.Path, given: pathlib.Path) -> os.stat_result:
  try:
    return os.lstat(path)
  except FileNotFoundError:
    pass
  except OSError as error:
    raise _cannot(given, "checked", error) from None
  try:
    # As XDG asks: a missing cache folder is made 0700 (the umask can only
    # take bits away), and so is each missing folder above it.
    os.mkdir(path, 0o700)
  except FileExistsError:
    pass  # Another process made it meanwhile: checked as any other.
  except OSError as error:
    raise _cannot(given, "made", error) from None
  return os.lstat(path)


def _cannot(given: pathlib.Path, what: str, error: OSError) -> Unsafe:
  return Unsafe(f"the cache folder {given} cannot be {what} "
                f"({error.strerror or error})")


def _check_owner(info: os.stat_result, path: pathlib.Path,
                 given: pathlib.Path, kind: str) -> None:
  if info.st_uid not in (0, os.getuid()):
    raise Unsafe(f"{kind} {path}, on the path of the cache folder {given}, "
                 f"belongs to uid {info.st_uid}, neither this user (uid "
                 f"{os.getuid()}) nor root: its owner could put another "
                 f"folder in the cache's place, so tfpartial uses no cache "
                 f"there; {_FIX}")


def _check_ancestor(info: os.stat_result, path: pathlib.Path,
                    given: pathlib.Path) -> None:
  if not stat.S_ISDIR(info.st_mode):
    raise _cannot(given, "made", NotADirectoryError(
        errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
  _check_owner(info, path, given, "the folder")
  mode = stat.S_IMODE(info.st_mode)
  if mode & 0o022 and not mode & stat.S_ISVTX:
    raise Unsafe(f"the folder {path}, on the path of the cache folder "
                 f"{given}, has mode {mode:04o}: group or others may write "
                 f"it, and so put another folder in the cache's place, so "
                 f"tfpartial uses no cache there; {_FIX}")
