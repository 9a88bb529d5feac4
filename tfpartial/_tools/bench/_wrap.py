"""(p) `spec.wrap(optimizer).minimize(loss)` in a TF1 graph, against
`spec.minimize(optimizer, loss)`: the documented TF1 idiom must cost what
the spec's own entry point costs (`_step/_deferred.py`: the masked
gradients of `compute_gradients` run only when read)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List

import tensorflow as tf

from tfpartial._api import _make
from tfpartial._tools.bench import _cases
from tfpartial._tools.bench import _sparse
from tfpartial._tools.bench._measure import Case

TARGET = 1.02


def _session(build: Callable[[], Any]) -> Callable[[], Any]:
  """A step: `build()` makes the train op in a new graph and session."""
  graph = tf.Graph()
  with graph.as_default():
    train_op = build()
    session = tf.compat.v1.Session(graph=graph)
    session.run(tf.compat.v1.global_variables_initializer())
  return lambda: session.run(train_op)


def _mlp_case(sizes: _cases.MlpSizes) -> Case:
  """The MLP of (b), v1 Adam, 30% of each kernel frozen."""
  kernels0, masks, inputs, targets = _cases.mlp(**sizes)

  def build(wrap: bool) -> Callable[[], Any]:
    def train_op() -> Any:
      kernels = [tf.compat.v1.Variable(k, use_resource=True)
                 for k in kernels0]
      loss = tf.reduce_mean(tf.square(
          _cases.forward(kernels, inputs) - targets))
      spec = _cases.freeze_where(kernels, masks)
      optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
      if wrap:
        return spec.wrap(optimizer).minimize(loss)
      return spec.minimize(optimizer, loss)
    return _session(train_op)

  return Case(f"(p) MLP {sizes['layers']}x{sizes['width']}, 30% of each "
              f"kernel frozen, batch {sizes['batch']}, TF1 graph, v1 Adam: "
              f"wrap().minimize against spec.minimize", build(False),
              build(True), f"<= {TARGET:g}", limit=TARGET)


def _compact_case(sizes: _sparse.Sizes) -> Case:
  """(o)'s variable, 1% trainable, compact: the whole step."""
  w0, train, inputs, targets, _ = _sparse.problem(sizes, 0.01)

  def build(wrap: bool) -> Callable[[], Any]:
    def train_op() -> Any:
      w = tf.compat.v1.Variable(w0, use_resource=True)
      loss = tf.reduce_mean(tf.square(tf.matmul(inputs, w) - targets))
      spec = _make.train_only(w, train, compact=True)
      optimizer = tf.compat.v1.train.AdamOptimizer(1e-3)
      if wrap:
        return spec.wrap(optimizer).minimize(loss)
      return spec.minimize(optimizer, loss)
    return _session(train_op)

  rows, columns, batch = sizes
  return Case(f"(p) {rows * columns / 1e6:g}M elements, 1% train "
              f"(scattered), compact, batch {batch}, TF1 graph, v1 Adam: "
              f"wrap().minimize against spec.minimize", build(False),
              build(True), f"<= {TARGET:g}", limit=TARGET)


def cases(quick: bool) -> Dict[str, List[Callable[[], Case]]]:
  """(p), by letter: its rows, each built when called."""
  mlp = (_cases.MlpSizes(width=64, layers=2, batch=16) if quick
         else _cases.MlpSizes(width=1024, layers=4, batch=256))
  sizes = _sparse.QUICK if quick else _sparse.FULL
  return {"p": [lambda: _mlp_case(mlp), lambda: _compact_case(sizes)]}
