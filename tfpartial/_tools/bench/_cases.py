"""The rows `tfpartial bench` has had since (a): the 4x1024 MLP and the
embedding, each against plain TensorFlow (see `_bench`)."""

from __future__ import annotations

import contextlib
import os
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Sequence,
                    Tuple, TypedDict)

import numpy as np
import tensorflow as tf

from tfpartial._api import _make
from tfpartial._api import _spec
from tfpartial._frozen._types import Variable
from tfpartial._kernels import _native
from tfpartial._tools.bench import _measure
from tfpartial._tools.bench._measure import Case

# Kernels (or their initial values), masks freezing part of each, inputs,
# targets.
Problem = Tuple[List[np.ndarray], List[np.ndarray], np.ndarray, np.ndarray]
# A step a case times: one call runs one training step.
Step = Callable[[], Any]


class MlpSizes(TypedDict):
  """The MLP of (a): `layers` kernels of `width` x `width`."""

  width: int
  layers: int
  batch: int


class EmbeddingSizes(TypedDict):
  """The table of (c) and (l): `trained` of its `rows` train."""

  rows: int
  dim: int
  trained: int
  batch: int


def state_bytes(variables: Iterable[Variable]) -> int:
  """The bytes `variables` hold."""
  return int(sum(np.prod(v.shape) * tf.as_dtype(v.dtype).size
                 for v in variables))


def mlp(width: int, layers: int, batch: int, seed: int = 0,
        frozen: float = 0.3) -> Problem:
  """Kernels, masks freezing about `frozen` of each, inputs, targets."""
  rng = np.random.default_rng(seed)
  kernels = [rng.normal(0, width ** -0.5, (width, width)).astype(np.float32)
             for _ in range(layers)]
  masks = [rng.random((width, width)) < frozen for _ in range(layers)]
  inputs = rng.normal(size=(batch, width)).astype(np.float32)
  targets = rng.normal(size=(batch, width)).astype(np.float32)
  return kernels, masks, inputs, targets


def freeze_where(kernels: Sequence[Variable],
                 masks: Sequence[np.ndarray]) -> _spec.FreezeSpec:
  """One spec: each kernel frozen where its mask is True."""
  spec = _spec.FreezeSpec()
  for kernel, mask in zip(kernels, masks):
    spec = spec | _make.freeze(kernel, mask)
  return spec


def forward(kernels: Sequence[tf.Variable], inputs: np.ndarray) -> tf.Tensor:
  hidden = inputs
  for kernel in kernels:
    hidden = tf.nn.relu(tf.matmul(hidden, kernel))
  return hidden


def _eager_mlp_case(width: int, layers: int, batch: int, kind: str,
                    jit_compile: bool = False) -> Case:
  """(a) Keras AdamW in tf.function (`kind="partial"`), (d) the same with
  the hand-written mask (`kind="mask"`), (e) (a) compiled by XLA, or (i)
  (a) without the compiled kernel (`kind="unfused"`)."""
  import keras  # pylint: disable=g-import-not-at-top
  kernels0, masks, inputs, targets = mlp(width, layers, batch)

  def build(kind: str) -> Step:
    kernels = [tf.Variable(k) for k in kernels0]
    optimizer = keras.optimizers.AdamW(1e-3, weight_decay=0.01)
    spec = freeze_where(kernels, masks)
    keep = [tf.constant(~m, tf.float32) for m in masks]

    @_measure.function(jit_compile=jit_compile)
    def step() -> tf.Tensor:
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(forward(kernels, inputs) - targets))
      grads = tape.gradient(loss, kernels)
      if kind in ("partial", "unfused"):
        spec.apply_gradients(optimizer, zip(grads, kernels))
      elif kind == "mask":
        optimizer.apply_gradients(
            zip([g * k for g, k in zip(grads, keep)], kernels))
      else:
        optimizer.apply_gradients(zip(grads, kernels))
      return loss

    with kernels_off(kind == "unfused"):
      step.get_concrete_function()  # Traced now, so the switch applies.
    return step

  if kind == "mask":
    return Case("(d) (a) with grads * mask by hand (for reference)",
                build("plain"), build("mask"), "~1.03")
  if jit_compile:
    return Case("(e) (a) compiled by XLA, tf.function(jit_compile=True)",
                build("plain"), build("partial"), "<= 1.03", limit=1.03)
  if kind == "unfused":
    return Case("(i) (a) without the compiled kernel (TFPARTIAL_KERNELS=off)",
                build("plain"), build("unfused"), "reference")
  title = f"MLP {layers}x{width}, 30% of each kernel frozen, batch {batch}"
  return Case(f"(a) {title}, Keras AdamW, tf.function, {kernel()}",
              build("plain"), build("partial"), "<= 1.03", limit=1.03)


def _graph_mlp_case(width: int, layers: int, batch: int,
                    kind: str = "partial") -> Case:
  """(b) The MLP in a TF1 graph with a tf.compat.v1 optimizer, (f) the same
  with the hand-written mask (`kind="mask"`), (g) (b) without the compiled
  kernel (`kind="unfused"`), or (h) (b) with TF1 ref variables
  (`kind="ref"`)."""
  kernels0, masks, inputs, targets = mlp(width, layers, batch)
  use_resource = kind != "ref"

  def build(kind: str) -> Step:
    graph = tf.Graph()
    with graph.as_default():
      kernels = [tf.compat.v1.Variable(k, use_resource=use_resource)
                 for k in kernels0]
      loss = tf.reduce_mean(tf.square(forward(kernels, inputs) - targets))
      optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
      if kind in ("partial", "unfused", "ref"):
        with kernels_off(kind == "unfused"):
          train_op = freeze_where(kernels, masks).minimize(optimizer, loss)
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
                build("plain"), build("ref"), "<= 1.03", limit=1.03)
  return Case(f"(b) MLP {layers}x{width}, 30% frozen, TF1 graph, v1 Adam, "
              f"{kernel()}", build("plain"), build("partial"), "<= 1.03",
              limit=1.03)


def kernel() -> str:
  """Whether the compiled kernel is loaded, as a row's label says it."""
  return "compiled kernel" if _native.library() else "no compiled kernel"


@contextlib.contextmanager
def kernels_off(off: bool) -> Iterator[None]:
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


def _embedding_case(rows: int, dim: int, trained: int, batch: int,
                    compact: bool = True) -> Case:
  """(c) A large embedding, a few trainable rows, Adam: compact mode; (l)
  the same with the default row spec (`compact=False`)."""
  import keras  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(1)
  table0 = rng.normal(size=(rows, dim)).astype(np.float32)
  ids = np.concatenate([rng.integers(0, rows - trained, batch // 2),
                        rng.integers(rows - trained, rows, batch // 2)])
  optimizers: Dict[bool, Any] = {}

  def build(partial: bool) -> Step:
    table = tf.Variable(table0)
    optimizer = optimizers[partial] = keras.optimizers.Adam(1e-3)
    spec = _make.train_only(table, np.s_[rows - trained:], compact=compact)

    @_measure.function()
    def step() -> tf.Tensor:
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
  title = f"embedding {rows:,}x{dim}, {trained:,} rows train"
  if not compact:
    return Case(f"(l) {title}, Keras Adam, tf.function, default row spec "
                "(no compact)",
                plain, partial, "<= 1.03", limit=1.03)
  plain(), partial()  # Build the optimizers, for their state sizes.
  return Case(
      f"(c) {title}, Adam, compact", plain, partial, "<= 0.1, state <= 1%",
      limit=0.1, state_limit=0.01,
      state=lambda: (state_bytes(optimizers[True].variables),
                     state_bytes(optimizers[False].variables)))


def cases(quick: bool) -> Dict[str, Callable[[], Case]]:
  """(a) to (i) and (l), by letter, each built when called."""
  if quick:  # Tiny sizes: checks the command works, not the machine.
    sizes = MlpSizes(width=64, layers=2, batch=16)
    embedding = EmbeddingSizes(rows=5_000, dim=8, trained=10, batch=32)
  else:
    sizes = MlpSizes(width=1024, layers=4, batch=256)
    embedding = EmbeddingSizes(rows=500_000, dim=64, trained=1_000, batch=512)
  return {
      "a": lambda: _eager_mlp_case(**sizes, kind="partial"),
      "b": lambda: _graph_mlp_case(**sizes),
      "c": lambda: _embedding_case(**embedding),
      "d": lambda: _eager_mlp_case(**sizes, kind="mask"),
      "e": lambda: _eager_mlp_case(**sizes, kind="partial", jit_compile=True),
      "f": lambda: _graph_mlp_case(**sizes, kind="mask"),
      "g": lambda: _graph_mlp_case(**sizes, kind="unfused"),
      "h": lambda: _graph_mlp_case(**sizes, kind="ref"),
      "i": lambda: _eager_mlp_case(**sizes, kind="unfused"),
      "l": lambda: _embedding_case(**embedding, compact=False),
  }
