"""`processes.run` behaves as `subprocess.run` of a real `python` would.

The docs', legacy examples' and command-line tests trust it to: if a child
of the python server saw another folder, environment, argument list,
`sys.path[0]` or exit status than a real process, those tests would pass
or fail for the wrong reason. Each case here runs both ways and compares.
"""

import os
import subprocess
import sys

import pytest

import processes

_PROBE = (
    "import json, os, sys\n"
    "data = sys.stdin.read()\n"
    "print(json.dumps([sys.argv, sys.path[0], os.getcwd(),\n"
    "                  os.environ.get('PROBE'), data,\n"
    "                  sys.modules['__main__'].__name__]))\n"
    "print('to stderr', file=sys.stderr)\n"
    "raise SystemExit(int(sys.argv[-1]))\n")


def _both(args, **kwargs):
  forked = processes.run(args, **kwargs)
  real = subprocess.run(args, capture_output=True, text=True, check=False,
                        **kwargs)
  return forked, real


@pytest.mark.parametrize("how", ["script", "module", "code"])
def test_a_child_is_the_python_a_real_process_is(tmp_path, how):
  (tmp_path / "probe.py").write_text(_PROBE)
  (tmp_path / "work").mkdir()
  args = {"script": [sys.executable, str(tmp_path / "probe.py"), "a", "3"],
          "module": [sys.executable, "-m", "probe", "a", "3"],
          "code": [sys.executable, "-c", _PROBE, "a", "3"]}[how]
  env = {**os.environ, "PROBE": "yes"}
  # `-m` finds probe.py in the current folder, which it puts first on the path.
  cwd = tmp_path if how == "module" else tmp_path / "work"
  forked, real = _both(args, cwd=cwd, env=env, input="given on stdin")
  assert (forked.returncode, forked.stdout, forked.stderr) == (
      real.returncode, real.stdout, real.stderr)
  assert real.returncode == 3 and "given on stdin" in real.stdout
  assert processes.served(args, env)


@pytest.mark.parametrize("code, status", [
    ("raise ValueError('boom')", 1),
    ("raise SystemExit('said why')", 1),
    ("import sys; sys.exit(None)", 0),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -9),
])
def test_exit_statuses_are_pythons(code, status):
  forked, real = _both([sys.executable, "-c", code])
  assert forked.returncode == real.returncode == status
  assert forked.stderr.splitlines()[-1:] == real.stderr.splitlines()[-1:]


def test_a_child_that_runs_too_long_is_killed():
  with pytest.raises(subprocess.TimeoutExpired):
    processes.run([sys.executable, "-c", "import time; time.sleep(60)"],
                  timeout=1)
  # The server serves the next command.
  assert processes.run([sys.executable, "-c", "print(1)"]).stdout == "1\n"


def test_a_change_read_at_import_runs_a_real_process():
  """TF_* is read while TensorFlow imports: a forked child could not honour
  it, so the command runs as a real process (its pid's parent is us)."""
  code = "import os; print(os.getppid())"
  real = processes.run([sys.executable, "-c", code],
                       env={**os.environ, "TF_ENABLE_ONEDNN_OPTS": "0"})
  forked = processes.run([sys.executable, "-c", code])
  assert int(real.stdout) == os.getpid()
  assert int(forked.stdout) != os.getpid()


_TAKEN_ONCE = (
    "import pathlib, sys\n"
    "tries = pathlib.Path(sys.argv[1])\n"
    "count = len(tries.read_text()) if tries.exists() else 0\n"
    "tries.write_text('x' * (count + 1))\n"
    "if count < int(sys.argv[2]):\n"
    "  raise SystemExit(sys.argv[3])\n")


@pytest.mark.parametrize("message, failures, runs, status", [
    (processes.PORT_TAKEN, 1, 2, 0),  # Taken once: the second run passes.
    (processes.PORT_TAKEN, 5, 3, 1),  # Taken every time: bounded, fails.
    ("ValueError: a bug", 1, 1, 1),   # Any other failure stands.
])
def test_a_run_is_repeated_only_for_a_port_taken(tmp_path, message, failures,
                                                 runs, status):
  tries = tmp_path / "tries"
  result = processes.until_ports_bind(lambda: processes.run(
      [sys.executable, "-c", _TAKEN_ONCE, str(tries), str(failures),
       message]))
  assert (len(tries.read_text()), result.returncode) == (runs, status)
