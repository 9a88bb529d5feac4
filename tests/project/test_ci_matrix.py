"""What tox.ini runs once and what it runs on every release.

CI machines are fresh and their disk is small: two CI runs stopped for
want of disk while installing the envs ("No space left on device", and a
download cut off beside it). The mypy env reads the source tree and
installs no TensorFlow; no env installs a TensorFlow a second time; pip
keeps no copy of the wheels; each env deletes itself once its tests ran.

Scan's tests run once, on TensorFlow 2.21: scan reads source and never
imports TensorFlow. The ones that run a script, a port, under TensorFlow
must run on 2.15 too, so the oldest release checks the ports scan writes.
"""

import configparser
import os
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
  env = _tox()["testenv:py311-mypy"]
  assert env.getboolean("skip_install"), dict(env)
  deps = env["deps"].split()
  assert not [dep for dep in deps if re.match(
      r"(tensorflow|tf_keras|keras)\b", dep)], deps
  assert any(dep.startswith("mypy~=") for dep in deps), deps
  assert "extras" not in env, dict(env)


def _tox():
  tox = configparser.ConfigParser(interpolation=None)
  tox.read(ROOT / "tox.ini")
  return tox


def test_ci_runs_the_readme_command_once_keeping_no_wheels_nor_envs():
  run = (ROOT / ".ci/run").read_text()
  readme_command = ".venv/bin/tox run-parallel --parallel 2"
  assert readme_command in (ROOT / "README.md").read_text()
  lines = run.strip().splitlines()
  assert lines[-1] == readme_command, lines[-1]
  assert run.count("tox run") == 1, run  # No retry: a test runs once.
  before = "\n".join(lines[:-1])
  assert re.search(r"^export .*\bPIP_NO_CACHE_DIR=1\b", before, re.M), run
  assert re.search(r"^export TFPARTIAL_CI_DROP_ENVS=1$", before, re.M), run
  testenv = _tox()["testenv"]
  assert "TFPARTIAL_CI_DROP_ENVS" in testenv["passenv"].split()
  assert testenv["commands_post"].split() == [
      "python", "{tox_root}/.ci/drop_env.py"], testenv["commands_post"]


def test_no_env_installs_a_tensorflow_another_env_installs():
  tox = _tox()
  envs = [env.strip() for env in tox["tox"]["envlist"].split(",")]
  releases = [re.search(r"tf(\d+)", env).group(1) for env in envs
              if re.search(r"-tf\d+", env)]
  assert sorted(releases) == sorted(set(releases)), envs
  assert not [section for section in tox.sections() if section.startswith(
      "testenv:") and section.split(":")[1] not in envs], tox.sections()
  # The graph-mode tests under TF1 behaviour run in the 2.21 env itself.
  commands = tox["testenv"]["commands"]
  tf221 = re.search(r"^tf221: (.*)$", commands, re.M).group(1)
  assert "test_tf1_behavior" not in tf221, tf221


def _venv(path):
  subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)],
                 check=True, timeout=120)
  return path / "bin" / "python"


def test_an_env_deletes_itself_on_ci_only(tmp_path):
  script = str(ROOT / ".ci/drop_env.py")
  env = tmp_path / ".tox" / "py311-x"
  python = _venv(env)
  quiet = {key: value for key, value in os.environ.items()
           if key != "TFPARTIAL_CI_DROP_ENVS"}
  subprocess.run([str(python), script], env=quiet, check=True, timeout=60)
  assert python.exists()  # A developer's env stays.
  other = _venv(tmp_path / "venv")
  ci = {**quiet, "TFPARTIAL_CI_DROP_ENVS": "1"}
  subprocess.run([str(other), script], env=ci, check=True, timeout=60)
  assert other.exists()  # Not in a `.tox` folder: no env of tox's.
  subprocess.run([str(python), script], env=ci, check=True, timeout=60)
  assert not env.exists()
  assert (tmp_path / ".tox").is_dir()
