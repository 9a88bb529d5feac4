"""What tox.ini runs once and what it runs on every release.

The mypy env reads the source tree and installs no TensorFlow: a CI run
on a fresh machine once failed installing a TensorFlow mypy never reads.

Scan's tests run once, on TensorFlow 2.21: scan reads source and never
imports TensorFlow. The ones that run a script, a port, under TensorFlow
must run on 2.15 too, so the oldest release checks the ports scan writes.
"""

import configparser
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).parent.parent.parent
# A scan test that runs a script (not `python -m tfpartial ...`) or trains
# a port with tests/tools/real_ports.py.
_RUNS_A_SCRIPT = re.compile(
    r'sys\.executable,\s*+(?!"-)|real_ports|run_and_compare')


def _expression(env):
  tox = (ROOT / "tox.ini").read_text()
  return re.search(rf'{env}: python -m pytest -k "([^"]+)"', tox).group(1)


def test_every_scan_test_that_runs_a_script_runs_on_the_oldest_release():
  running = [path for path in sorted((ROOT / "tests/tools").glob(
      "test_scan*.py")) if _RUNS_A_SCRIPT.search(path.read_text())]
  assert len(running) >= 8, running  # The port tests of 2026-12-06.
  result = subprocess.run(
      [sys.executable, "-m", "pytest", "--collect-only", "-q",
       "-p", "no:cacheprovider", "-k", _expression("tf215"),
       *map(str, running)], cwd=ROOT, capture_output=True, text=True,
      timeout=300, check=False)
  assert result.returncode == 0, result.stdout[-3000:] + result.stderr
  summary = result.stdout.strip().splitlines()[-1]
  assert "deselected" not in summary, summary


def test_the_mypy_env_installs_neither_the_package_nor_tensorflow():
  tox = configparser.ConfigParser(interpolation=None)
  tox.read(ROOT / "tox.ini")
  env = tox["testenv:py311-mypy"]
  assert env.getboolean("skip_install"), dict(env)
  deps = env["deps"].split()
  assert not [dep for dep in deps if re.match(
      r"(tensorflow|tf_keras|keras)\b", dep)], deps
  assert any(dep.startswith("mypy~=") for dep in deps), deps
  assert "extras" not in env, dict(env)


def test_ci_tries_the_installs_again_and_runs_the_tests_once():
  run = (ROOT / ".ci/run").read_text()
  readme_command = ".venv/bin/tox run-parallel --parallel 2"
  loop = re.search(r"for attempt in 1 2 3; do\n(.*?)\ndone\n", run, re.S)
  assert loop, run
  assert f"{readme_command} --notest" in loop.group(1), loop.group(1)
  assert "exit 1" in loop.group(1), loop.group(1)
  after = run[loop.end():].strip().splitlines()
  assert after == [readme_command], after
