"""`tfpartial verify` as a command, on inputs that are not what they seem.

Each runs the command in a process of its own, with a timeout: a FIFO or
a device given as a checkpoint is refused before it is opened for
reading (it never hangs, never fills memory); a broken pipe or a full
disk on stdout keeps the verdict as the exit status; an AFTER that is
BEFORE is refused; errors go to stderr only, in one line.
"""

import ctypes
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

import processes

_ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}


def _command(before, after, spec):
  return [sys.executable, "-m", "tfpartial", "verify", str(before),
          str(after), "--spec", str(spec)]


def _run(*args, timeout=120, **kwargs):
  if kwargs:  # A stream or a preexec_fn of the test's own: a real process.
    kwargs.setdefault("capture_output", "stdout" not in kwargs)
    return subprocess.run(_command(*args), text=True, timeout=timeout,
                          check=False, env=_ENV, **kwargs)
  return processes.run(_command(*args), timeout=timeout, env=_ENV)


@pytest.fixture(name="pair")
def _pair(tmp_path):
  """BEFORE and AFTER TF2 checkpoints (v[1] trained) and the spec; AFTER's
  folder has a `checkpoint` file naming it."""
  v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
  before = tf.train.Checkpoint(v=v).write(str(tmp_path / "before" / "ckpt"))
  v.assign_add([[0, 0, 0], [1, 1, 1]])
  after = tf.train.Checkpoint(v=v).save(str(tmp_path / "after" / "ckpt"))
  spec = tmp_path / "spec.json"
  spec.write_text('{"v": {"freeze": "0"}}')
  return pathlib.Path(before), pathlib.Path(after), spec


def _one_error(result, *parts):
  assert result.returncode == 2, result.stdout + result.stderr
  assert result.stdout == "", result.stdout
  assert result.stderr.startswith("tfpartial verify: error: "), result.stderr
  assert result.stderr.count("\n") == 1, result.stderr
  for part in parts:
    assert part in result.stderr, (part, result.stderr)


def test_the_files_compared_are_printed(pair):
  before, after, spec = pair
  result = _run(before, after.parent, spec)
  assert result.returncode == 0, result.stdout + result.stderr
  lines = result.stdout.splitlines()
  assert lines[0] == f"before: {os.path.realpath(before)}", lines
  assert lines[1] == f"after:  {os.path.realpath(after)}", lines


def test_an_after_folder_naming_before_s_checkpoint_is_refused(pair, tmp_path):
  before, _, spec = pair
  folder = tmp_path / "elsewhere"
  folder.mkdir()
  (folder / "checkpoint").write_text(
      f'model_checkpoint_path: "{before}"\n')
  _one_error(_run(before, folder, spec), "the same checkpoint",
             os.path.realpath(before))


def test_the_same_keras_file_twice_is_refused(tmp_path):
  import keras  # pylint: disable=g-import-not-at-top
  model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2)],
                           name="m")
  model.save_weights(tmp_path / "a.weights.h5")
  os.symlink(tmp_path / "a.weights.h5", tmp_path / "b.weights.h5")
  spec = tmp_path / "spec.json"
  spec.write_text('{"m/dense/kernel": {"freeze": "0"}}')
  _one_error(_run(tmp_path / "a.weights.h5", tmp_path / "b.weights.h5", spec),
             "the same checkpoint")


def test_a_closed_pipe_keeps_the_verdict(pair):
  before, after, spec = pair
  process = subprocess.Popen(_command(before, after, spec), env=_ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
  process.stdout.close()  # As `| head -1` once it has its line.
  _, err = process.communicate(timeout=120)
  assert process.returncode == 0, err.decode()
  assert b"Traceback" not in err and b"Broken pipe" not in err, err.decode()


def test_a_full_disk_keeps_the_verdict_and_says_so(pair, tmp_path):
  before, after, spec = pair
  (tmp_path / "changed").mkdir()
  v = tf.Variable(np.zeros((2, 3), np.float32))
  changed = tf.train.Checkpoint(v=v).write(str(tmp_path / "changed" / "c"))
  for target, verdict in ((after, 0), (changed, 1)):
    with open("/dev/full", "w", encoding="utf-8") as full:
      result = _run(before, target, spec, stdout=full, stderr=subprocess.PIPE)
    assert result.returncode == verdict, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert "No space left on device" in result.stderr, result.stderr


def test_a_fifo_is_refused_not_waited_for(pair, tmp_path):
  before, after, spec = pair
  for name in ("x.weights.h5", "x.keras", "x.h5"):
    os.mkfifo(tmp_path / name)
    _one_error(_run(before, tmp_path / name, spec, timeout=60),
               name, "not a regular file")
  data = next(after.parent.glob(after.name + ".data-*")).name
  for replaced in (after.name + ".index", data):
    folder = tmp_path / replaced
    shutil.copytree(after.parent, folder)
    (folder / replaced).unlink()
    os.mkfifo(folder / replaced)
    _one_error(_run(before, folder / after.name, spec, timeout=60),
               replaced, "not a regular file")


def test_a_device_is_refused_unread(pair, tmp_path):
  before, _, spec = pair
  for name in ("z.keras", "z.weights.h5"):
    os.symlink("/dev/zero", tmp_path / name)
    _one_error(_run(before, tmp_path / name, spec, timeout=60),
               name, "not a regular file")


def test_a_checkpoint_file_that_is_a_fifo_is_refused(pair, tmp_path):
  before, _, spec = pair
  (tmp_path / "folder").mkdir()
  os.mkfifo(tmp_path / "folder" / "checkpoint")
  _one_error(_run(before, tmp_path / "folder", spec, timeout=60),
             "checkpoint", "not a regular file")


_CAPABILITIES = {"dac_override": 1, "dac_read_search": 2}
_PR_CAPBSET_DROP = 24


def _without_root_s_read_override():
  """In the child, before it runs Python: root without the capabilities
  that let it read any file (so mode bits apply to it as to any user)."""
  libc = ctypes.CDLL(None, use_errno=True)
  for capability in _CAPABILITIES.values():
    if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
      raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.mark.parametrize("given", ["folder", "prefix"])
def test_a_folder_that_cannot_be_read_says_permission_denied(pair, given):
  """As root (the tests' user here) reads any folder, the command runs
  without the capabilities that allow that (or as the user itself)."""
  before, after, spec = pair
  after.parent.chmod(0)
  try:
    target = after.parent if given == "folder" else after
    try:
      result = _run(before, target, spec, preexec_fn=(
          _without_root_s_read_override if os.getuid() == 0 else None))
    except subprocess.SubprocessError as error:
      pytest.skip(f"cannot drop root's capabilities here: {error}")
    _one_error(result, "permission denied", str(after.parent))
    assert "Failed to find" not in result.stderr, result.stderr
  finally:
    after.parent.chmod(0o755)


def test_with_stderr_closed_an_error_does_not_go_to_stdout(tmp_path):
  spec = tmp_path / "spec.json"
  spec.write_text('{"v": {"freeze": "0"}}')
  result = subprocess.run(
      " ".join(_command(tmp_path / "a", tmp_path / "b", spec)) + " 2>&-",
      shell=True, capture_output=True, text=True, timeout=120, check=False,
      env=_ENV)
  assert result.returncode == 2, result.stdout
  assert result.stdout == "", result.stdout


def _loading_tensorflow(process: subprocess.Popen) -> bool:
  """Waits until `process` maps TensorFlow's library (its import has
  begun, and takes seconds more); False if it ended first."""
  deadline = time.monotonic() + 120
  while process.poll() is None and time.monotonic() < deadline:
    try:
      with open(f"/proc/{process.pid}/maps", encoding="utf-8") as maps:
        if "libtensorflow" in maps.read():
          return True
    except OSError:
      return False
    time.sleep(0.005)
  return False


def test_ctrl_c_is_one_line_and_exit_130(pair):
  before, after, spec = pair
  # The interrupt comes while the command imports TensorFlow: a delay
  # measured by a clock missed it on a loaded machine (the command had
  # ended before the test process ran again).
  # A terminal's Ctrl-C reaches a command whose SIGINT is at its default;
  # a suite started in the background (`.ci/run &`) hands its children
  # SIGINT ignored, and Python then never raises KeyboardInterrupt (the
  # command ran to the end and exited 0 in all three envs that way).
  process = subprocess.Popen(
      _command(before, after, spec), env=_ENV, stdout=subprocess.PIPE,
      stderr=subprocess.PIPE, text=True,
      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  assert _loading_tensorflow(process), process.communicate(timeout=120)
  # Again until it ends, as a user presses it again: a SIGINT that
  # arrives while the first is handled must change nothing (the CLI
  # ignores it while it prints "interrupted").
  deadline = time.monotonic() + 120
  while process.poll() is None and time.monotonic() < deadline:
    process.send_signal(signal.SIGINT)
    time.sleep(0.05)
  out, err = process.communicate(timeout=120)
  assert process.returncode == 130, out + err
  assert err.endswith("tfpartial verify: interrupted\n"), err
  assert "Traceback" not in err, err


def test_a_spec_path_that_starts_like_json_is_read_as_the_file(pair,
                                                               tmp_path):
  before, after, spec = pair
  (tmp_path / "[exp 3]").mkdir()
  shutil.copy(spec, tmp_path / "[exp 3]" / "spec.json")
  result = _run(before, after, "[exp 3]/spec.json", cwd=tmp_path)
  assert result.returncode == 0, result.stdout + result.stderr
