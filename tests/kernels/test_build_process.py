"""A build's processes and files do not outlive the process that started it.

`kill -9` (or the OOM killer) during a first build used to leave the
compiler running without its timeout, and its temporary library in the
cache for good. Now the compiler runs under `_watchdog`, which stops its
whole process group when the build's process dies, and a later process
removes temporaries left by a build that died with its watchdog.
"""

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

import fakes
from tfpartial._kernels import _build
from tfpartial._kernels import _native


def _wait_for(path, seconds=120):
  deadline = time.monotonic() + seconds
  while not (path.exists() and path.read_text().strip()):
    assert time.monotonic() < deadline, f"{path} never appeared"
    time.sleep(0.05)
  return int(path.read_text().split()[0])


def _running(pid):
  """Whether `pid` runs (a zombie waiting for its reaper has ended)."""
  try:
    return pathlib.Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
  except FileNotFoundError:
    return False


def _gone_within(pids, seconds=10):
  deadline = time.monotonic() + seconds
  while any(_running(pid) for pid in pids):
    if time.monotonic() > deadline:
      return False
    time.sleep(0.05)
  return True


def _temporaries(cache):
  return sorted(p.name for p in cache.glob(".kernels-*"))


@pytest.fixture
def slow(tmp_path):
  """A `$CXX` that starts writing its output, starts a child (as the
  driver starts cc1plus), writes both pids, and waits for a minute."""
  return fakes.fake_compiler(
      tmp_path, "slow", f'echo partial > "$out"\nsleep 60 &\n'
      f'echo $$ $! > {tmp_path / "pids"}\nwait')


def _start_build(tmp_path, cache, cxx):
  environment = dict(os.environ, TFPARTIAL_CACHE=str(cache), CXX=cxx)
  environment.pop(_native.SWITCH, None)
  return subprocess.Popen(
      [sys.executable, "-c",
       "from tfpartial._kernels import _native; _native.library()"],
      cwd=tmp_path, env=environment, stdout=subprocess.DEVNULL,
      stderr=subprocess.DEVNULL)


@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists(),
                    reason="reads process states from /proc")
def test_kill_9_during_a_build_stops_the_compiler_and_its_children(
    tmp_path, slow):
  cache = tmp_path / "cache"
  build = _start_build(tmp_path, cache, slow)
  try:
    _wait_for(tmp_path / "pids")
    compiler, child = map(int, (tmp_path / "pids").read_text().split())
    assert _temporaries(cache), "no temporary library while building"
    build.send_signal(signal.SIGKILL)
    build.wait(timeout=30)
    # Before: both ran on for their minute, without a timeout.
    assert _gone_within([compiler, child]), "the compiler outlived it"
    deadline = time.monotonic() + 10
    while _temporaries(cache) and time.monotonic() < deadline:
      time.sleep(0.05)
    assert _temporaries(cache) == []  # Before: left for good.
  finally:
    build.kill()
    for pid in map(int, (tmp_path / "pids").read_text().split()
                   if (tmp_path / "pids").exists() else ()):
      try:
        os.kill(pid, signal.SIGKILL)
      except ProcessLookupError:
        pass


def test_temporaries_a_dead_build_left_are_removed_by_the_next_process(
    tmp_path, failing):
  cache = fakes.private(tmp_path / "cache")
  key = _build.cache_key(failing)
  old = time.time() - 3600  # Older than any build may run (180 s here).
  stale = [f".kernels-{key}-abcd_123.so", ".kernels-record-x1y2z3w4.tmp",
           f".kernels-{'0' * 16}-zzzzzzzz.so"]  # Another key's too.
  kept = [f".kernels-{key}-live1234.so",  # A build running now.
          ".kernels-notes.txt", "kernels-mine.so"]  # Not a temporary's.
  for name in stale + kept:
    (cache / name).write_bytes(b"\0" * 1000)
    if name not in kept[:1]:
      os.utime(cache / name, (old, old))
  if os.getuid() == 0:  # Another user's is never touched.
    others = cache / f".kernels-{key}-others12.so"
    others.write_bytes(b"")
    os.utime(others, (old, old))
    os.chown(others, fakes.OTHER_UID, fakes.OTHER_UID)
    kept.append(others.name)
  _native.load(failing, cache)
  left = sorted(p.name for p in cache.iterdir() if p.suffix != ".failed")
  assert left == sorted(kept)
