"""Bench row (m): peak memory above plain for one large variable.

Each configuration runs in a fresh process (`python -m
tfpartial._tools.bench._memory ELEMENTS CONFIGURATION`), which builds the
variable, the spec and the optimizer, takes a few steps and prints its peak
resident size (`peak_bytes`). A configuration's cost is its peak
less the plain run's of the same optimizer, in sizes of the variable: the
spec, the masked gradient, the snapshot, the restore's select, whatever
tfpartial holds at once beyond what the optimizer needs anyway.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from typing import Dict, Iterator, List, Optional, TextIO, Tuple

import numpy as np
import tensorflow as tf

from tfpartial._api import _make
from tfpartial._frozen._types import Index
from tfpartial._tools.bench import _cases
from tfpartial._tools.bench import _measure

# Configuration -> its label. "optimizer:spec[:off|:wrap]": "off" runs
# without the compiled kernel, "wrap" steps by `spec.wrap(optimizer)
# .minimize(loss)` (TF1 graph), else `spec.minimize`; "optimizer:plain" is
# the optimizer without tfpartial.
CONFIGURATIONS = {
    "sgdm:elements": "half frozen element-wise, Keras SGD momentum, eager",
    "sgdm:rows": "half the rows frozen, Keras SGD momentum, eager",
    "sgdm:elements:off": "half frozen element-wise, Keras SGD momentum, "
                         "eager, kernel off",
    "sgdm:rows:off": "half the rows frozen, Keras SGD momentum, eager, "
                     "kernel off",
    "adam:elements": "half frozen element-wise, Keras Adam, eager",
    "adam:elements:off": "half frozen element-wise, Keras Adam, eager, "
                         "kernel off",
    "adam:rows": "half the rows frozen, Keras Adam, eager",
    "adam:rows:off": "half the rows frozen, Keras Adam, eager, kernel off",
    "v1sgd:elements": "half frozen element-wise, v1 SGD, TF1 graph",
    "v1sgd:rows": "half the rows frozen, v1 SGD, TF1 graph",
    "v1sgd:elements:wrap": "half frozen element-wise, v1 SGD, TF1 graph, "
                           "wrap().minimize",
}
_WIDTH = 64  # The variable is [elements // 64, 64].
_STEPS = 3


def peak_bytes() -> int:
  """This process's peak resident size so far.

  On Linux, `VmHWM`: `getrusage`'s `ru_maxrss` carries the parent's peak
  into a child across fork and exec, so a child of a large bench process
  would report the parent's size.
  """
  try:
    with open("/proc/self/status") as status:
      for line in status:
        if line.startswith("VmHWM:"):
          return 1024 * int(line.split()[1])  # In kB.
  except OSError:
    pass
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
  return peak if sys.platform == "darwin" else 1024 * peak  # Linux: KiB.


def run_configuration(configuration: str, elements: int) -> None:
  """Builds and steps one configuration in this process."""
  name, kind = configuration.split(":")[:2]
  shape = (elements // _WIDTH, _WIDTH)
  index: Dict[str, Index] = {"elements": np.s_[:, ::2],
                             "rows": np.s_[:shape[0] // 2]}
  with _cases.kernels_off(configuration.endswith(":off")):
    if name == "v1sgd":
      _tf1_steps(shape, None if kind == "plain" else index[kind],
                 wrap=configuration.endswith(":wrap"))
    else:
      _eager_steps(name, shape, None if kind == "plain" else index[kind])


def _tf1_steps(shape: Tuple[int, int], index: Optional[Index],
               wrap: bool = False) -> None:
  graph = tf.Graph()
  with graph.as_default():
    variable = tf.compat.v1.Variable(tf.zeros(shape))
    loss = tf.reduce_sum(variable)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    if index is None:
      train_op = optimizer.minimize(loss)
    elif wrap:
      train_op = _make.freeze(variable, index).wrap(optimizer).minimize(loss)
    else:
      train_op = _make.freeze(variable, index).minimize(optimizer, loss)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      for _ in range(_STEPS):
        session.run(train_op)


def _eager_steps(name: str, shape: Tuple[int, int],
                 index: Optional[Index]) -> None:
  import keras  # pylint: disable=g-import-not-at-top
  variable = tf.Variable(tf.zeros(shape))
  optimizer = (keras.optimizers.SGD(0.01, momentum=0.9) if name == "sgdm"
               else keras.optimizers.Adam(1e-3))
  spec = None if index is None else _make.freeze(variable, index)
  for _ in range(_STEPS):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(variable)
    grads = tape.gradient(loss, [variable])
    if spec is None:
      optimizer.apply_gradients(zip(grads, [variable]))
    else:
      spec.apply_gradients(optimizer, zip(grads, [variable]))


def _child(configurations: List[str], elements: int) -> List[int]:
  """Peak bytes after each configuration, all run in one fresh process."""
  environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
  result = subprocess.run(
      [sys.executable, "-m", "tfpartial._tools.bench._memory", str(elements),
       *configurations], capture_output=True, text=True, check=False,
      env=environment, timeout=1800)
  if result.returncode != 0:
    raise RuntimeError(f"bench (m) {configurations}: the child process "
                       f"failed:\n{result.stderr[-2000:]}")
  return [int(line) for line in result.stdout.split()]


def rows(quick: bool, progress: TextIO) -> Iterator[_measure.Result]:
  """(m): one row per configuration; a fresh process for each run, and
  two runs of each (one process for everything, quick)."""
  elements = 64_000 if quick else 50_000_000
  variable_bytes = 4 * elements
  size = f"one {elements / 1e6:g}M float32 variable"
  runs: Dict[str, List[int]] = {}
  if quick:  # One process for all: checks they run, measures nothing.
    order = [c for configuration in CONFIGURATIONS
             for c in (_plain(configuration), configuration)]
    for c, peak in zip(order, _child(order, elements)):
      runs.setdefault(c, [peak])
  else:
    for repeat in range(2):
      for configuration in CONFIGURATIONS:
        for c in (_plain(configuration), configuration):
          if len(runs.get(c, ())) > repeat:
            continue  # This repeat's plain run is done already.
          _measure.show(progress, f"(m) {c}: run {repeat + 1}/2")
          runs.setdefault(c, []).extend(_child([c], elements))
    _measure.show(progress, "")
  for configuration, label in CONFIGURATIONS.items():
    plain = runs[_plain(configuration)]
    partial = runs[configuration]
    ratios = [(p - q) / variable_bytes for p, q in zip(partial, plain)]
    yield _measure.repeated(
        f"(m) peak memory above plain / variable, {size}, {label}",
        [p / 2**20 for p in plain], [p / 2**20 for p in partial], ratios,
        unit="MiB", target="<= 0.5 (the variable's size)", limit=0.5)


def _plain(configuration: str) -> str:
  """The plain run `configuration` compares with (the kernel is tfpartial's:
  plain runs need no run without it)."""
  return configuration.split(":")[0] + ":plain"


if __name__ == "__main__":
  for chosen in sys.argv[2:]:
    run_configuration(chosen, int(sys.argv[1]))
    print(peak_bytes(), flush=True)
