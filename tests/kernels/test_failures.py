"""Failed builds are recorded with their cause; causes that go away retry.

A cache that cannot be written is found before compiling (`_cache.probe`),
so a full disk costs no compile and no record. Full disks, quotas and
read-only file systems need root or a file system of their own to make;
so the probe's write (`_cache._fill`, a seam) is made to fail with their
errno here, and a real `RLIMIT_FSIZE` (EFBIG), which needs neither, runs
in a child process.
"""

import errno
import os
import subprocess
import sys
import time

import pytest

import fakes
from tfpartial._kernels import _build
from tfpartial._kernels import _cache
from tfpartial._kernels import _native

ROOM_ERRORS = [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES]


@pytest.mark.parametrize("code", ROOM_ERRORS, ids=errno.errorcode.get)
def test_a_cache_that_cannot_be_written_is_found_before_compiling(
    tmp_path, failing, monkeypatch, capfd, code):
  def full(handle, size):
    raise OSError(code, os.strerror(code))

  cache = tmp_path / "cache"
  # `raising=False`: before the probe there was nothing to patch.
  monkeypatch.setattr(_cache, "_fill", full, raising=False)
  library, why = _native.load(failing, cache)
  assert library is None
  assert why == (f"not building kernels.cc: the cache folder {cache} cannot "
                 f"be written ({os.strerror(code)}); make room there or set "
                 f"TFPARTIAL_CACHE to a folder that has it")
  # No compile, no "building ..." line, nothing recorded.
  assert fakes.runs(failing) == 0
  assert capfd.readouterr().err == (
      f"tfpartial: running without the compiled kernel: {why}\n")
  assert os.listdir(cache) == []
  monkeypatch.undo()  # Room again: the next process builds.
  _native.load(failing, cache)
  assert fakes.runs(failing) == 1


def test_a_file_size_limit_is_found_before_compiling(tmp_path, copier):
  """A real EFBIG: the probe asks for more than the 1 MiB allowed, which
  the library itself (about 600 KB) would fit in."""
  script = (
      "import json, pathlib, resource, signal, sys\n"
      "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
      "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))\n"
      "from tfpartial._kernels import _native\n"
      "print(json.dumps(_native.load(sys.argv[1], pathlib.Path(sys.argv[2]))"
      "[1]))\n")
  result = subprocess.run(
      [sys.executable, "-c", script, copier, str(tmp_path / "cache")],
      cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  why = result.stdout.splitlines()[-1]
  assert "cannot be written (File too large)" in why, (why, result.stderr)
  assert fakes.runs(copier) == 0


@pytest.fixture
def out_of_room(tmp_path):
  """A compiler whose linker runs out of room (its temporary folder's,
  which the probe of the cache does not see)."""
  return fakes.fake_compiler(
      tmp_path, "full",
      "echo 'ld: final link failed: No space left on device' >&2\nexit 1")


def _age(record, seconds):
  then = time.time() - seconds
  os.utime(record, (then, then))


def test_an_out_of_room_failure_is_retried_after_a_while(
    tmp_path, out_of_room):
  cache = tmp_path / "cache"
  library, why = _native.load(out_of_room, cache)
  (record,) = cache.glob("*.failed")
  assert why == (f"building kernels.cc failed: ld: final link failed: No "
                 f"space left on device (recorded in {record}; retried 10 "
                 f"min after it, or delete it to retry)")
  assert record.read_text().startswith("cause: room\n")
  library, again = _native.load(out_of_room, cache)
  assert library is None and again.startswith("the last build failed: ")
  assert fakes.runs(out_of_room) == 1  # Not every process compiles again.
  _age(record, 601)
  _native.load(out_of_room, cache)
  assert fakes.runs(out_of_room) == 2  # Before: kept for good.


def test_a_record_of_an_earlier_release_is_read_by_its_words(
    tmp_path, failing, out_of_room):
  cache = fakes.private(tmp_path / "cache")
  for cxx, text in ((out_of_room, "ld: write: Disk quota exceeded"),
                    (failing, "fatal error: no headers")):
    record = cache / f"kernels-{_build.cache_key(cxx)}.failed"
    record.write_text(text)  # No cause line: the old format.
    _age(record, 3600)
    _native.load(cxx, cache)
  assert fakes.runs(out_of_room) == 1  # Room: retried.
  assert fakes.runs(failing) == 0  # A compile error: kept.


def test_a_compile_error_is_never_retried_for_the_same_key(
    tmp_path, failing):
  cache = tmp_path / "cache"
  _native.load(failing, cache)
  (record,) = cache.glob("*.failed")
  assert record.read_text() == "cause: compiler\nfatal error: no headers"
  _age(record, 10 * 86400)
  _native.load(failing, cache)
  assert fakes.runs(failing) == 1


def test_a_retry_that_works_removes_the_record(
    tmp_path, out_of_room, kernel):
  cache = tmp_path / "cache"
  _native.load(out_of_room, cache)
  (record,) = cache.glob("*.failed")
  _age(record, 601)
  # Room again: the same compiler (the same key) now builds.
  assert fakes.fake_compiler(tmp_path, "full",
                             f'cp "{kernel}" "$out"') == out_of_room
  _build.build(cache, out_of_room)
  assert not record.exists()
  assert len(list(cache.glob("kernels-*.so"))) == 1
