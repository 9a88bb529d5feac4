"""The compiled kernel: built from `_kernels/` on first use, then cached.

TensorFlow has no op that updates only part of a variable, and no public
way to add one but a custom op (`tf.load_op_library`), compiled against the
headers of the TensorFlow that loads it (`tf.sysconfig`). A wheel built for
one release would not load in another, so the kernel is built where it
runs: the first time a step could use it, with the C++ compiler on the
PATH (`$CXX`, else `c++`), into a cache keyed by the source, the
TensorFlow release and the flags (`$TFPARTIAL_CACHE`, else
`$XDG_CACHE_HOME/tfpartial`, else `~/.cache/tfpartial`; a temporary
folder when that cannot be written). Building takes about 10 s; later
processes load the cached library.

Without a compiler, or when building or loading fails, tfpartial runs the
same steps without the kernel, with the same results (but for the last
bit Grappler changes in Keras' weight decay inside a `tf.function`; see
`_fused_keras`); `reason()` says why. `TFPARTIAL_KERNELS=off` turns the
kernel off.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import pathlib
import platform
import shutil
import subprocess
import tempfile
import threading
from typing import Any, Optional, Tuple

import tensorflow as tf

SOURCE = pathlib.Path(__file__).with_name("_kernels") / "partial_adam.cc"
SWITCH = "TFPARTIAL_KERNELS"
_LOCK = threading.Lock()
_log = logging.getLogger(__name__)


def enabled() -> bool:
  """Whether `TFPARTIAL_KERNELS` leaves the kernel on (read at each call)."""
  return os.environ.get(SWITCH, "").strip().lower() not in (
      "0", "off", "false", "no")


def library() -> Optional[Any]:
  """The loaded kernel library, or None (see `reason()`)."""
  return _load()[0] if enabled() else None


def reason() -> Optional[str]:
  """Why `library()` is None, or None when it is not."""
  if not enabled():
    return f"turned off by {SWITCH}={os.environ[SWITCH]}"
  return _load()[1]


def compiler() -> Optional[str]:
  """The C++ compiler's path: `$CXX`, else `c++`, if found."""
  return shutil.which(os.environ.get("CXX") or "c++")


def cache_dir() -> pathlib.Path:
  """Where the kernel is built; a temporary folder if that cannot be made
  or written (a read-only home, say)."""
  explicit = os.environ.get("TFPARTIAL_CACHE")
  if explicit:
    directory = pathlib.Path(explicit)
  else:
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    directory = pathlib.Path(base) / "tfpartial"
  try:
    directory.mkdir(parents=True, exist_ok=True)
    if os.access(directory, os.W_OK):
      return directory
  except OSError:
    pass
  user = os.getuid() if hasattr(os, "getuid") else "user"
  return pathlib.Path(tempfile.gettempdir()) / f"tfpartial-{user}"


class BuildFailed(Exception):
  """The compiler failed; its last lines are the message."""


def build(directory: pathlib.Path, cxx: str) -> pathlib.Path:
  """Compiles the kernel into `directory`, unless it is there already.

  Returns the library's path. Raises BuildFailed when the compiler fails,
  and again without running it while the failure's record
  (`partial_adam-KEY.failed`, which holds the compiler's message) stays in
  `directory`: a process start should not pay for a build that cannot
  succeed. Delete that file to try again. Safe when several processes
  build at once: each writes a file of its own and renames it into place.
  """
  flags = tf.sysconfig.get_compile_flags()
  link = tf.sysconfig.get_link_flags()
  key = hashlib.sha256("\0".join(
      [SOURCE.read_text(), tf.__version__, tf.sysconfig.get_include(),
       cxx, platform.machine()] + flags + link).encode()).hexdigest()[:16]
  target = directory / f"partial_adam-{key}.so"
  failed = target.with_suffix(".failed")
  if target.exists():
    return target
  if failed.exists():
    raise BuildFailed(f"{failed.read_text()} (recorded in {failed})")
  directory.mkdir(parents=True, exist_ok=True)
  handle, partial = tempfile.mkstemp(suffix=".so", dir=directory)
  os.close(handle)
  try:
    # No -ffast-math and no FMA contraction: every operation must be the
    # correctly rounded one, as in TensorFlow's own kernel.
    subprocess.run(
        [cxx, "-shared", "-fPIC", "-O3", "-fno-math-errno",
         "-ffp-contract=off", "-w", str(SOURCE), "-o", partial, *flags,
         *link],
        check=True, capture_output=True, text=True, timeout=600)
    os.replace(partial, target)
  except subprocess.CalledProcessError as error:
    message = "\n".join((error.stderr or "").strip().splitlines()[-5:])
    failed.write_text(message or f"{cxx} exited with {error.returncode}")
    raise BuildFailed(failed.read_text()) from None
  finally:
    if os.path.exists(partial):
      os.remove(partial)
  return target


@functools.lru_cache(maxsize=None)
def _load() -> Tuple[Optional[Any], Optional[str]]:
  with _LOCK:
    return load(compiler(), cache_dir())


def load(cxx: Optional[str], directory: pathlib.Path
         ) -> Tuple[Optional[Any], Optional[str]]:
  """(the library, None), or (None, why not): builds with `cxx` if needed."""
  if cxx is None:
    return _unavailable("no C++ compiler found ($CXX, else c++)")
  try:
    path = build(directory, cxx)
  except (BuildFailed, OSError, subprocess.SubprocessError) as error:
    return _unavailable(f"building {SOURCE.name} failed: {error}")
  try:
    return tf.load_op_library(str(path)), None
  except (tf.errors.OpError, OSError) as error:
    return _unavailable(f"loading {path} failed: {error}")


def _unavailable(why: str) -> Tuple[None, str]:
  _log.info("tfpartial runs without its compiled kernel: %s", why)
  return None, why
