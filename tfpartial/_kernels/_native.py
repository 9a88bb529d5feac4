"""The compiled kernel: built from `_kernels/` on first use, then cached.

TensorFlow has no op that updates only part of a variable, and no public
way to add one but a custom op (`tf.load_op_library`), compiled against the
headers of the TensorFlow that loads it (`tf.sysconfig`). A wheel built for
one release would not load in another, so the kernel is built where it
runs: the first time a step could use it, with the C++ compiler on the
PATH (`$CXX`, else `c++`), into a cache keyed by the source, the
TensorFlow release, the compiler and the flags (`$TFPARTIAL_CACHE`, else
`$XDG_CACHE_HOME/tfpartial`, else `~/.cache/tfpartial`), for the
instruction set this CPU has (`_isa`). Building takes about 20 s of CPU
time (`BUILD_TIME`), says so on stderr, and is bounded and watched
(`_build`); later processes load the cached library. The settings are read and
checked in `_settings`.

The cache is used only when it and the folders on its path are the
user's (`_path`), and a library only after checking it (`_cache`). When
the folder is not safe, cannot be made or has no room, there is no
compiler, or building or loading fails (recorded with its cause,
`_failures`), tfpartial runs the same steps without the kernel, with the
same results (but for the last bit Grappler changes in Keras' weight
decay inside a `tf.function`; see `_fused_keras`); `reason()` says why.
Nothing that goes wrong here raises from a step. `TFPARTIAL_KERNELS=off`
turns the kernel off.
"""

from __future__ import annotations

import logging
import os
import pathlib
import shutil
import threading
from types import ModuleType
from typing import List, Optional, Tuple, cast

import tensorflow as tf

from tfpartial._kernels import _build
from tfpartial._kernels import _cache
from tfpartial._kernels import _failures
from tfpartial._kernels import _isa
from tfpartial._kernels import _path
from tfpartial._kernels import _settings

SOURCE = _build.SOURCE
SWITCH = _settings.SWITCH
NO_COMPILER = "no C++ compiler found ($CXX, else c++)"
# How long a first build takes, as its notice says (docs/kernel.md, "When
# it builds, it says so", has the measurements): the compiler's own time,
# and what a busy machine makes of it.
BUILD_TIME = ("about 20 s of one core's time (a minute or more while other "
              "jobs share the cores)")
_LOCK = threading.Lock()
# (library, why not, loaded from), as `_load_with_path` returns it.
_Loaded = Tuple[Optional[ModuleType], Optional[str], Optional[pathlib.Path]]
_loaded: List[_Loaded] = []
# Descriptors of libraries the loader opened as /proc/self/fd/N: kept
# open, so that no later load reuses a name the loader has seen.
_held: List[int] = []
_log = logging.getLogger(__name__)


def enabled() -> bool:
  """Whether `TFPARTIAL_KERNELS` leaves the kernel on (read at each call)."""
  return _settings.enabled()


def library() -> Optional[ModuleType]:
  """The loaded kernel library, or None (see `reason()`)."""
  return _load()[0] if enabled() else None


def reason() -> Optional[str]:
  """Why `library()` is None, or None when it is not."""
  if not enabled():
    return f"turned off by {SWITCH}={os.environ[SWITCH]}"
  return _load()[1]


def loaded_from() -> Optional[pathlib.Path]:
  """The file `library()` was loaded from, or None."""
  return _load()[2] if enabled() else None


def instruction_set() -> Optional[str]:
  """The instruction set of the library loaded (`_isa`), or None."""
  return _isa.chosen().name if library() is not None else None


def compiler() -> Optional[str]:
  """The C++ compiler's path: `$CXX`, else `c++`, if found."""
  return shutil.which(os.environ.get("CXX") or "c++")


def cache_dir() -> pathlib.Path:
  """The kernel's cache folder (`_settings.cache_dir`)."""
  return _settings.cache_dir()


def _load() -> _Loaded:
  # Loaded at most once per process: the loader returns an empty module
  # for a second copy of ops it has already registered.
  with _LOCK:
    if not _loaded:
      _loaded.append(_load_safely())
    return _loaded[0]


def _load_safely() -> _Loaded:
  try:
    return _load_here()
  except Exception as error:  # pylint: disable=broad-except
    # The kernel is an optimisation: whatever goes wrong in finding,
    # building or loading it, every step runs without it, with a reason,
    # instead of raising (once, not at each step).
    return _fall_back(f"the compiled kernel cannot be used: "
                      f"{type(error).__name__}: {error}", None)


def _load_here() -> _Loaded:
  cxx = compiler()
  if cxx is None:
    return _unavailable(NO_COMPILER)
  try:
    directory = cache_dir()
  except RuntimeError as error:  # pathlib: no HOME, no passwd entry.
    return _unavailable(f"no folder to cache the compiled kernel in "
                        f"({error}); set TFPARTIAL_CACHE")
  return _load_with_path(cxx, directory)


def load(cxx: Optional[str], directory: pathlib.Path
         ) -> Tuple[Optional[ModuleType], Optional[str]]:
  """(the library, None), or (None, why not): builds with `cxx` if needed."""
  return _load_with_path(cxx, directory)[:2]


def _load_with_path(cxx: Optional[str], directory: pathlib.Path
                    ) -> _Loaded:
  try:
    return _checked_load(cxx, directory)
  except OSError as error:  # A file tfpartial needs cannot be read.
    return _unavailable(f"the compiled kernel cannot be used: {error}")


def _checked_load(cxx: Optional[str], directory: pathlib.Path) -> _Loaded:
  if cxx is None:
    return _unavailable(NO_COMPILER)
  if not _cache.supported():
    return _unavailable("this system has no file owners and modes to "
                        "check the kernel's cache with")
  try:
    # Every later path is below the folder the links on the way lead to.
    directory = _path.checked(pathlib.Path(os.path.abspath(directory)))
    folder = _cache.open_private(directory)
  except _cache.Unsafe as error:
    _say(f"running without the compiled kernel: {error}")
    return _unavailable(str(error))
  try:
    _cache.remove_stale(folder, _settings.stale_after())
    return _load_or_build(folder, directory, cxx)
  finally:
    os.close(folder)


def _load_or_build(folder: int, directory: pathlib.Path, cxx: str
                   ) -> _Loaded:
  key = _build.cache_key(cxx)
  why = "there is no build for this TensorFlow and compiler yet"
  try:
    found = _cache.open_library(folder, directory, key)
  except _cache.Unusable as error:
    found, why = None, f"the cached one is unusable: {error}"
  if found is not None:
    module, problem = _load_library(*found)
    if module is not None:
      return module, None, found[1]
    why = f"the cached one is unusable: {problem}"
  try:
    seconds = _settings.build_timeout()
  except _settings.Refused as error:
    return _fall_back(f"not building {SOURCE.name}: {error}", None)
  record = _failures.path(directory, key)
  failed = _failures.read(folder, directory, key)
  if failed is not None:
    retried = failed.retry_reason(seconds)
    if retried is None:
      fix = _failures.fix(failed.cause, record, failed.seconds)
      return _unavailable(f"the last build failed: {failed.message} "
                          f"({fix})")
    why = retried
  try:
    _cache.probe(directory)
  except OSError as error:  # Found before compiling, not after.
    return _fall_back(
        f"not building {SOURCE.name}: the cache folder {directory} cannot "
        f"be written ({error.strerror or error}); make room there or set "
        f"{_settings.CACHE} to a folder that has it", None)
  _say(f"building its compiled kernels ({SOURCE.name} for "
       f"{_isa.chosen().name}, TensorFlow {tf.__version__}, {cxx}) because "
       f"{why}; this takes {BUILD_TIME}, once: it is cached in "
       f"{directory}. {SWITCH}=off runs without it.")
  return _build_and_load(folder, directory, cxx, key, seconds)


def _build_and_load(folder: int, directory: pathlib.Path, cxx: str,
                    key: str, seconds: float) -> _Loaded:
  record = _failures.path(directory, key)
  # A failed load after a good build is recorded too, unless a library
  # this process loaded before may hide the new one's ops.
  record_load = not _held
  try:
    _build.build(directory, cxx, seconds)
    found = _cache.open_library(folder, directory, key)
  except _build.BuildFailed as error:  # Recorded by build, if it could.
    fix = _failures.fix(error.cause, record, seconds)
    return _fall_back(f"building {SOURCE.name} failed: {error}",
                      fix if error.recorded else None)
  except (OSError, _cache.Unusable) as error:
    return _fall_back(f"building {SOURCE.name} failed: {error}", None)
  module, problem = ((None, f"{record.with_suffix('.sha256')} is missing")
                     if found is None else _load_library(*found))
  if module is not None:  # Loaded from `found`, so it is not None.
    return module, None, cast(Tuple[int, pathlib.Path], found)[1]
  why = cast(str, problem)  # Said whenever nothing loaded.
  if record_load:
    try:
      _failures.record(directory, key, _failures.LOAD, why)
    except OSError:
      record_load = False
  return _fall_back(why, _failures.fix(_failures.LOAD, record)
                    if record_load else None)


def _fall_back(problem: str, retry: Optional[str]) -> _Loaded:
  why = f"{problem} ({retry})" if retry else problem
  _say(f"running without the compiled kernel: {why}")
  return _unavailable(why)


def _load_library(handle: int, path: pathlib.Path
                  ) -> Tuple[Optional[ModuleType], Optional[str]]:
  """Loads the checked library open as `handle` (closed or kept)."""
  # Through the descriptor that was checked: the very bytes checked.
  name = (f"/proc/self/fd/{handle}" if os.path.isdir("/proc/self/fd")
          else str(path))
  try:
    module = tf.load_op_library(name)
  except Exception as error:  # pylint: disable=broad-except
    # Whatever the loader raises, training goes on without the kernel.
    os.close(handle)
    first = str(error).strip().splitlines()[:1] or [type(error).__name__]
    return None, f"loading {path} failed: {first[0]}"
  _held.append(handle)
  missing = [op for op in _build.ops() if not hasattr(module, op)]
  if missing:
    return None, f"{path} loads but lacks the ops {', '.join(missing)}"
  return module, None


def _say(message: str) -> None:
  _settings.say(message)


def _unavailable(why: str) -> Tuple[None, str, None]:
  _log.info("tfpartial runs without its compiled kernel: %s", why)
  return None, why, None
