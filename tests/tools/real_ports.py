"""The shared tail of the tests that port a real file with `tfpartial scan
--diff` and run it: the diff applies (`git apply --check`, `patch -p1
--dry-run`, then applied), and the original and the port, trained a few
steps from the same seed, hold the frozen elements bit for bit (on their
uint32 view), train the others, and end bit for bit alike."""

import os
import pathlib
import shutil
import sys

import pytest

import processes

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}

# Appended to a test's run script, which defines `run(module)`: the
# module's training, a few steps, as a list of (before, after, frozen)
# arrays, `frozen` a bool mask of the elements that must not move.
COMPARE = '''

def compare(original, port):
  import numpy as np
  ends = []
  for name, module in (("original", original), ("port", port)):
    arrays = run(module)
    held = all(np.array_equal(a[m].view(np.uint32), b[m].view(np.uint32))
               for b, a, m in arrays)
    trained = all(not np.array_equal(a[~m], b[~m]) for b, a, m in arrays)
    print(name, "held:", held, "trained:", trained)
    ends.append([a for _, a, _ in arrays])
  print("same:", all(np.array_equal(a.view(np.uint32), b.view(np.uint32))
                     for a, b in zip(*ends)))
'''
# A run script's `load(path)`: the file at `path` as a module, run once.
LOAD = '''\
def load(path):
  import importlib.util
  spec = importlib.util.spec_from_file_location(path[:-3], path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module
'''
HELD = ["original held: True trained: True", "port held: True trained: True",
        "same: True"]


def run(args, folder, timeout=300):
  return processes.run(args, cwd=folder, timeout=timeout, env=ENV)


def scan_diff(folder, target, by_hand=()):
  """`tfpartial scan --diff target` run in `folder`; none of the places
  `by_hand` (`path:line`) is left by hand."""
  if shutil.which("git") is None or shutil.which("patch") is None:
    pytest.fail("git and patch are needed to test that the diff applies")
  diff = run([sys.executable, "-m", "tfpartial", "scan", "--diff", target],
             folder, timeout=60)
  assert diff.returncode == 1, diff.stderr
  for place in by_hand:
    assert place not in diff.stderr, diff.stderr
  return diff.stdout


def apply(folder: pathlib.Path, diff: str) -> None:
  """Checks that `diff` applies in `folder` with both tools, and applies
  it."""
  (folder / "port.diff").write_text(diff)
  check = run(["git", "apply", "--check", "port.diff"], folder, timeout=60)
  assert check.returncode == 0, check.stderr
  check = run(["patch", "-p1", "--dry-run", "-i", "port.diff"], folder,
              timeout=60)
  assert check.returncode == 0, check.stdout + check.stderr
  applied = run(["git", "apply", "port.diff"], folder, timeout=60)
  assert applied.returncode == 0, applied.stderr


def run_and_compare(folder: pathlib.Path, script: str, timeout=300) -> None:
  """Runs `script` (ending with `compare(original, port)`) in `folder`:
  both held and trained, and ended alike."""
  head, call = script.rstrip().rsplit("\n", 1)
  (folder / "run.py").write_text(head + COMPARE + "\n\n" + call + "\n")
  result = run([sys.executable, "run.py"], folder, timeout=timeout)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.splitlines()[-3:] == HELD, result.stdout
