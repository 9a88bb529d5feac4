"""`tfpartial bench`: the cost of partial freezing, as ratios on this machine.

Each case times the same training step with and without tfpartial in one
process. A round is one step of each, back to back, in alternating order;
its ratio compares two steps taken a few milliseconds apart, so the drift
of a shared, noisy machine mostly cancels. The table gives the median
ratio over the rounds and the middle half of them (first to third
quartile), which shows how noisy the machine was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import statistics
import sys
import time
from typing import Callable, List, Optional, TextIO, Tuple

import numpy as np
import tensorflow as tf

from tfpartial import _native
from tfpartial import _progress
from tfpartial import _spec


@dataclasses.dataclass
class Case:
  """One comparison: two step functions and, optionally, state sizes."""

  name: str
  plain: Callable[[], object]
  partial: Callable[[], object]
  target: str
  state: Optional[Callable[[], tuple]] = None  # (partial bytes, plain bytes)


@dataclasses.dataclass
class Result:
  name: str
  plain_ms: float
  partial_ms: float
  ratio: float
  spread: Tuple[float, float]  # First and third quartile of the ratios.
  target: str
  state: Optional[tuple]


def _bytes(variables) -> int:
  return int(sum(np.prod(v.shape) * tf.as_dtype(v.dtype).size for v in variables))


def _mlp(width: int, layers: int, batch: int, seed: int = 0):
  rng = np.random.default_rng(seed)
  kernels = [rng.normal(0, width ** -0.5, (width, width)).astype(np.float32)
             for _ in range(layers)]
  masks = [rng.random((width, width)) < 0.3 for _ in range(layers)]
  inputs = rng.normal(size=(batch, width)).astype(np.float32)
  targets = rng.normal(size=(batch, width)).astype(np.float32)
  return kernels, masks, inputs, targets


def _freeze_where(kernels, masks) -> _spec.FreezeSpec:
  """One spec: each kernel frozen where its mask is True."""
  spec = _spec.FreezeSpec()
  for kernel, mask in zip(kernels, masks):
    spec = spec | _spec.freeze(kernel, mask)
  return spec


def _forward(kernels, inputs):
  hidden = inputs
  for kernel in kernels:
    hidden = tf.nn.relu(tf.matmul(hidden, kernel))
  return hidden


def _eager_mlp_case(width, layers, batch, kind: str,
                    jit_compile: bool = False) -> Case:
  """(a) Keras AdamW in tf.function (`kind="partial"`), (d) the same with
  the hand-written mask (`kind="mask"`), (e) (a) compiled by XLA, or (i)
  (a) without the compiled kernel (`kind="unfused"`)."""
  import keras  # pylint: disable=g-import-not-at-top
  kernels0, masks, inputs, targets = _mlp(width, layers, batch)

  def build(kind):
    kernels = [tf.Variable(k) for k in kernels0]
    optimizer = keras.optimizers.AdamW(1e-3, weight_decay=0.01)
    spec = _freeze_where(kernels, masks)
    keep = [tf.constant(~m, tf.float32) for m in masks]

    @tf.function(jit_compile=jit_compile)
    def step():
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(_forward(kernels, inputs) - targets))
      grads = tape.gradient(loss, kernels)
      if kind in ("partial", "unfused"):
        spec.apply_gradients(optimizer, zip(grads, kernels))
      elif kind == "mask":
        optimizer.apply_gradients(
            zip([g * k for g, k in zip(grads, keep)], kernels))
      else:
        optimizer.apply_gradients(zip(grads, kernels))
      return loss

    with _kernels_off(kind == "unfused"):
      step.get_concrete_function()  # Traced now, so the switch applies.
    return step

  if kind == "mask":
    return Case("(d) (a) with grads * mask by hand (for reference)",
                build("plain"), build("mask"), "~1.03")
  if jit_compile:
    return Case("(e) (a) compiled by XLA, tf.function(jit_compile=True)",
                build("plain"), build("partial"), "<= 1.03")
  if kind == "unfused":
    return Case("(i) (a) without the compiled kernel (TFPARTIAL_KERNELS=off)",
                build("plain"), build("unfused"), "reference")
  title = f"MLP {layers}x{width}, 30% of each kernel frozen, batch {batch}"
  return Case(f"(a) {title}, Keras AdamW, tf.function, {_kernel()}",
              build("plain"), build("partial"), "<= 1.03")


def _graph_mlp_case(width, layers, batch, kind: str = "partial") -> Case:
  """(b) The MLP in a TF1 graph with a tf.compat.v1 optimizer, (f) the same
  with the hand-written mask (`kind="mask"`), (g) (b) without the compiled
  kernel (`kind="unfused"`), or (h) (b) with TF1 ref variables
  (`kind="ref"`)."""
  kernels0, masks, inputs, targets = _mlp(width, layers, batch)
  use_resource = kind != "ref"

  def build(kind):
    graph = tf.Graph()
    with graph.as_default():
      kernels = [tf.compat.v1.Variable(k, use_resource=use_resource)
                 for k in kernels0]
      loss = tf.reduce_mean(tf.square(_forward(kernels, inputs) - targets))
      optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
      if kind in ("partial", "unfused", "ref"):
        with _kernels_off(kind == "unfused"):
          train_op = _freeze_where(kernels, masks).minimize(optimizer, loss)
      elif kind == "mask":
        # compute_gradients gates the gradients as minimize does.
        pairs = optimizer.compute_gradients(loss, kernels)
        train_op = optimizer.apply_gradients(
            (g * tf.constant(~m, tf.float32), k)
            for (g, k), m in zip(pairs, masks))
      else:
        train_op = optimizer.minimize(loss)
      session = tf.compat.v1.Session(graph=graph)
      session.run(tf.compat.v1.global_variables_initializer())
    return lambda: session.run(train_op)

  if kind == "mask":
    return Case("(f) (b) with grads * mask by hand (for reference)",
                build("plain"), build("mask"), "~1.03")
  if kind == "unfused":
    return Case("(g) (b) without the compiled kernel (TFPARTIAL_KERNELS=off)",
                build("plain"), build("unfused"), "reference")
  if kind == "ref":
    return Case("(h) (b) with TF1 ref variables, as under disable_v2_behavior",
                build("plain"), build("ref"), "<= 1.03")
  return Case(f"(b) MLP {layers}x{width}, 30% frozen, TF1 graph, v1 Adam, "
              f"{_kernel()}", build("plain"), build("partial"), "<= 1.03")


def _kernel() -> str:
  return "compiled kernel" if _native.library() else "no compiled kernel"


@contextlib.contextmanager
def _kernels_off(off: bool):
  """`TFPARTIAL_KERNELS=off` while a step is built, if `off`."""
  saved = os.environ.get(_native.SWITCH)
  if off:
    os.environ[_native.SWITCH] = "off"
  try:
    yield
  finally:
    if saved is None:
      os.environ.pop(_native.SWITCH, None)
    else:
      os.environ[_native.SWITCH] = saved


def _embedding_case(rows, dim, trained, batch) -> Case:
  """(c) A large embedding, a few trainable rows, Adam: compact mode."""
  import keras  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(1)
  table0 = rng.normal(size=(rows, dim)).astype(np.float32)
  ids = np.concatenate([rng.integers(0, rows - trained, batch // 2),
                        rng.integers(rows - trained, rows, batch // 2)])
  optimizers = {}

  def build(partial):
    table = tf.Variable(table0)
    optimizer = optimizers[partial] = keras.optimizers.Adam(1e-3)
    spec = _spec.train_only(table, np.s_[rows - trained:], compact=True)

    @tf.function
    def step():
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.gather(table, ids) - 1.0))
      grads = tape.gradient(loss, [table])
      if partial:
        spec.apply_gradients(optimizer, zip(grads, [table]))
      else:
        optimizer.apply_gradients(zip(grads, [table]))
      return loss

    return step

  plain, partial = build(False), build(True)
  plain(), partial()  # Build the optimizers, for their state sizes.
  return Case(
      f"(c) embedding {rows:,}x{dim}, {trained:,} rows train, Adam, compact",
      plain, partial, "<= 0.1, state <= 1%",
      state=lambda: (_bytes(optimizers[True].variables),
                     _bytes(optimizers[False].variables)))


def _time(step) -> float:
  """Seconds for one step, until its result is ready."""
  start = time.perf_counter()
  result = step()
  if hasattr(result, "numpy"):
    result.numpy()
  return time.perf_counter() - start


def measure(case: Case, rounds: int, progress: TextIO) -> Result:
  """`rounds` rounds of one plain and one tfpartial step, order alternating."""
  for _ in range(3):  # Trace, build and warm up both.
    case.plain(), case.partial()
  plain_times, partial_times, ratios = [], [], []
  line = _progress.Progress(progress)
  for index in range(rounds):
    if index % 10 == 0 or index == rounds - 1:
      line.show(f"  {case.name[:60]}: round {index + 1}/{rounds}",
                transient=index > 0)  # Elsewhere than a terminal, once.
    if index % 2 == 0:
      plain = _time(case.plain)
      partial = _time(case.partial)
    else:
      partial = _time(case.partial)
      plain = _time(case.plain)
    plain_times.append(plain)
    partial_times.append(partial)
    ratios.append(partial / plain)
  line.close()
  return Result(case.name, 1e3 * statistics.median(plain_times),
                1e3 * statistics.median(partial_times),
                statistics.median(ratios), quartiles(ratios), case.target,
                case.state() if case.state else None)


def quartiles(values: List[float]) -> Tuple[float, float]:
  """The first and third quartile, always within the values measured.

  ("inclusive": the default method extrapolates past the smallest and
  largest value when there are few, down to negative ratios.)
  """
  if len(values) < 2:
    return values[0], values[0]
  first, _, third = statistics.quantiles(values, n=4, method="inclusive")
  return first, third


def run(quick: bool = False, rounds: Optional[int] = None,
        out: TextIO = sys.stdout, progress: TextIO = sys.stderr) -> List[Result]:
  """Builds the cases, measures them, prints the table."""
  if quick:  # Tiny sizes: checks the command works, not the machine.
    sizes = dict(width=64, layers=2, batch=16)
    embedding = dict(rows=5_000, dim=8, trained=10, batch=32)
    rounds = rounds or 6
  else:
    sizes = dict(width=1024, layers=4, batch=256)
    embedding = dict(rows=500_000, dim=64, trained=1_000, batch=512)
    rounds = rounds or 200
  print(f"tfpartial bench, TensorFlow {tf.__version__}, {rounds} rounds of "
        "one plain and one tfpartial step each", file=out)
  # Each case is built just before it runs and dropped after, so no case
  # runs beside another's variables, sessions or optimizer state.
  cases = [lambda: _eager_mlp_case(**sizes, kind="partial"),
           lambda: _graph_mlp_case(**sizes),
           lambda: _embedding_case(**embedding),
           lambda: _eager_mlp_case(**sizes, kind="mask"),
           lambda: _eager_mlp_case(**sizes, kind="partial", jit_compile=True),
           lambda: _graph_mlp_case(**sizes, kind="mask"),
           lambda: _graph_mlp_case(**sizes, kind="unfused"),
           lambda: _graph_mlp_case(**sizes, kind="ref"),
           lambda: _eager_mlp_case(**sizes, kind="unfused")]
  results = [measure(build(), rounds, progress) for build in cases]
  _print(results, out)
  if _native.library() is None:
    print(f"(a) and (b) ran without tfpartial's compiled kernel: "
          f"{_native.reason()}", file=out)
  return results


def _print(results: List[Result], out: TextIO) -> None:
  width = max(len(r.name) for r in results)
  print(f"{'case':<{width}}  {'plain ms':>9}  {'tfpartial ms':>12}  "
        f"{'ratio':>6}  {'middle half':>11}  target", file=out)
  for r in results:
    spread = f"{r.spread[0]:.3f}-{r.spread[1]:.3f}"
    line = (f"{r.name:<{width}}  {r.plain_ms:9.2f}  {r.partial_ms:12.2f}  "
            f"{r.ratio:6.3f}  {spread:>11}  {r.target}")
    if r.state:
      partial, plain = r.state
      line += (f"; optimizer state {partial / 2**20:.2f} MiB vs "
               f"{plain / 2**20:.1f} MiB ({100 * partial / plain:.2f}%)")
    print(line, file=out)
