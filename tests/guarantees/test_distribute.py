"""Guarantee 6 under tf.distribute: MirroredStrategy and multi-worker.

Each strategy runs in child processes (logical devices and TF_CONFIG are
process-wide): `distribute_child.py` trains custom loops in replica context
(Keras AdamW and TF1 Ftrl, on variables aggregated NONE and MEAN, with NaN
gradients on the frozen elements) and `model.fit` inside `strategy.scope()`
(with EMA, whose final swap runs in cross-replica context), then reports.
On the newest TensorFlow the mirrored child also trains `compact=True`
specs (`compact_scenarios`), in the same process.
"""

import contextlib
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import pytest

import helpers
import processes

pytestmark = helpers.needs_keras_3

HERE = pathlib.Path(__file__).parent.parent
SCENARIOS = ["replica_keras_adamw_NONE", "replica_v1_ftrl_NONE",
             "replica_keras_adamw_MEAN", "replica_v1_ftrl_MEAN",
             "model_fit_keras_adamw", "model_fit_keras_adamw_ema"]
TIMEOUT = 600


def _environment(**extra):
  return {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **extra}


def _check(results, replicas):
  assert sorted(set(results) - {"limits"}) == sorted(SCENARIOS)
  for name, result in results.items():
    if name == "limits":
      continue
    assert result["replicas"] == replicas, name
    assert result["frozen_held"], f"{name}: a frozen element moved"
    assert result["identical"], f"{name}: the replicas differ"
    assert result["trained"], f"{name}: the trainable elements did not train"


@pytest.fixture(scope="module", name="mirrored")
def _mirrored(tmp_path_factory):
  """The mirrored child's report (with the compact scenarios where
  `helpers.MULTIPROCESS_ONCE`)."""
  out = tmp_path_factory.mktemp("mirrored") / "mirrored.json"
  compact = ["compact"] if helpers.MULTIPROCESS_ONCE else []
  result = subprocess.run(
      [sys.executable, str(HERE / "distribute_child.py"), "mirrored",
       str(out)] + compact, capture_output=True, text=True, timeout=TIMEOUT,
      env=_environment(), check=False)
  assert result.returncode == 0, result.stderr[-4000:]
  return json.loads(out.read_text())


def test_mirrored_strategy_on_three_logical_devices(mirrored):
  results = {k: v for k, v in mirrored.items() if k != "compact"}
  _check(results, replicas=3)
  # What docs/guides/distribute.md says of TensorFlow and Keras, plain: a
  # replica-context assign to a MEAN variable of the values it holds moves
  # bits (so tfpartial restores through merge_call), and a Keras 3
  # optimizer cannot make its variables inside strategy.run.
  limits = results["limits"]
  assert limits["mean_assign_changed_bits"] > 0, limits
  assert limits["keras_optimizer_built_in_run"] is not None, limits


@helpers.multiprocess_once
def test_compact_under_the_mirrored_strategy(mirrored):
  """`compact=True`: the small variable mirrored, the replicas identical,
  each step bit for bit the split reference's (trained under the same
  strategy), the Keras optimizers' state only for what trains."""
  results = mirrored["compact"]
  assert sorted(results) == [
      "compact_fit_keras_adam_elements_ema", "compact_fit_keras_adam_rows",
      "compact_loop_keras_adam_elements_MEAN", "compact_loop_v1_adam_rows"]
  for name, result in results.items():
    assert result["replicas"] == 3, name
    assert result["reference"] is None, f"{name}: {result['reference']}"
    assert result["identical"], f"{name}: the replicas differ"
    if "keras" in name:
      kind = "rows" if name.endswith("rows") else "elements"
      assert result["state_shapes"] == ["()", "(3, 3)" if kind == "rows"
                                        else "(8,)"], (name, result)


def _free_ports(count):
  with contextlib.ExitStack() as stack:
    sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
    for sock in sockets:
      sock.bind(("127.0.0.1", 0))
    return [sock.getsockname()[1] for sock in sockets]


@contextlib.contextmanager
def _processes(commands):
  """Starts the processes, output to log files; always kills what is left."""
  processes = []
  with contextlib.ExitStack() as stack:
    try:
      for command, env, log in commands:
        out = stack.enter_context(open(log, "w"))
        processes.append(subprocess.Popen(command, env=env, stdout=out,
                                          stderr=subprocess.STDOUT))
      yield processes
    finally:
      for process in processes:
        if process.poll() is None:
          process.kill()
        process.wait(timeout=30)


def _wait(processes, seconds):
  deadline = time.monotonic() + seconds
  for process in processes:
    process.wait(timeout=max(1.0, deadline - time.monotonic()))
  return [process.returncode for process in processes]


def _run_workers(tmp_path):
  """Both workers on fresh ports; their exit and logs as a CompletedProcess."""
  ports = _free_ports(2)
  cluster = {"worker": [f"127.0.0.1:{port}" for port in ports]}
  commands = []
  for index in range(2):
    config = json.dumps({"cluster": cluster,
                         "task": {"type": "worker", "index": index}})
    commands.append(([sys.executable, str(HERE / "distribute_child.py"),
                      "multiworker", str(tmp_path / f"worker{index}.json")],
                     _environment(TF_CONFIG=config),
                     tmp_path / f"worker{index}.log"))
  with _processes(commands) as workers:
    codes = _wait(workers, TIMEOUT)
  logs = "".join((tmp_path / f"worker{i}.log").read_text()[-2000:]
                 for i in range(2))
  return subprocess.CompletedProcess(commands, int(codes != [0, 0]), "", logs)


def test_multi_worker_mirrored_strategy_on_loopback(tmp_path):
  pytest.importorskip("tf_keras", reason="multi-worker fit runs on tf_keras "
                      "(Keras 3 fit does not support the strategy)")
  result = processes.until_ports_bind(lambda: _run_workers(tmp_path))
  assert result.returncode == 0, result.stderr
  results = [json.loads((tmp_path / f"worker{i}.json").read_text())
             for i in range(2)]
  for worker in results:
    _check(worker, replicas=1)
  for name in SCENARIOS:
    assert results[0][name]["bits"] == results[1][name]["bits"], (
        f"{name}: the workers disagree")
  # docs/guides/distribute.md: Keras 3's fit does not run under the
  # strategy (keras-team/keras#20585); tf_keras's does, as above.
  for worker in results:
    fit = worker["limits"]["keras3_fit"]
    assert fit is not None and fit.startswith("ValueError") and (
        "PerReplica" in fit), fit


def test_parameter_server_strategy_in_process(tmp_path):
  out = tmp_path / "ps.json"
  result = processes.until_ports_bind(lambda: subprocess.run(
      [sys.executable, str(HERE / "ps_child.py"), str(out)],
      capture_output=True, text=True, timeout=TIMEOUT, env=_environment(),
      check=False))
  assert result.returncode == 0, result.stderr[-4000:]
  results = json.loads(out.read_text())
  assert sorted(results) == ["adamw", "ftrl"]
  for name, outcome in results.items():
    assert outcome == {"frozen_held": True, "trained": True}, name
