"""The conformance suite (`conformance.Suite`) for tf.compat.v1.train.

Every optimizer of `problems.V1_OPTIMIZERS` in every mode (TF1 graph with
resource and ref variables, eager, `tf.function`, XLA) through every entry
point (`spec.apply_gradients`, `spec.minimize`, a wrapped optimizer's
`minimize`, and its `compute_gradients` then `apply_gradients`).
"""

from typing import NamedTuple

import numpy as np
import pytest
import tensorflow as tf

import compact_problem as cp
import conformance
import helpers
import problems
import tfpartial
from embedding_problem import XLA_SPARSE
from problems import X0, X_FROZEN


class V1Way(NamedTuple):
  """A mode of `conftest.py` and an entry point of `problems.ENTRIES`."""

  mode: helpers.Mode
  entry: str

  def __repr__(self):
    return f"{self.mode.name}-{self.entry}"


def _layout(optimizer, model):
  """Per variable, the names of the slots the optimizer holds for it."""
  return {name: frozenset(slot for slot in optimizer.get_slot_names()
                          if optimizer.get_slot(variable, slot) is not None)
          for name, variable in (("x", model.x), ("b", model.b),
                                 ("c", model.c))}


class TestV1(conformance.Suite):
  """tf.compat.v1.train optimizers."""

  OPTIMIZERS = problems.V1_OPTIMIZERS
  NAMES = {
      "main": OPTIMIZERS,
      "decay": ("Ftrl_l1_l2", "Ftrl_shrinkage", "ProximalGradientDescent",
                "ProximalAdagrad", "AdagradDA"),
      "rows": OPTIMIZERS,
      "compact": ("Adam",),  # Each optimizer: step/test_compact_elements.py.
  }
  EXACT_WAYS = tuple(V1Way(mode, "apply_gradients")
                     for mode in helpers.EXACT_MODES)

  @pytest.fixture(params=problems.ENTRIES)
  def way(self, request, mode):
    return V1Way(mode, request.param)

  def fuses(self, way):
    return way.mode is helpers.XLA

  def wraps(self, way):
    return way.entry.startswith("wrap")

  def reference_key(self, way):
    return way.mode.name

  def train(self, way, name, compact):
    make = self.OPTIMIZERS[name]
    with way.mode.runner() as runner:
      model = problems.Model.build(runner)
      if compact:
        spec = (tfpartial.train_only(model.x, ~X_FROZEN, compact=True)
                | tfpartial.freeze(model.b))
      else:
        spec = model.spec()
      optimizer = make(model.global_step)
      run = runner.step(
          problems.steps_for(way.entry, runner, spec, optimizer, model))
      trajectory = []
      for _ in range(conformance.STEPS):
        run()
        trajectory.append(tuple(runner.value(v) for v in model.variables))
      shapes = frozenset(tuple(v.shape.as_list())
                         for v in optimizer.variables())
      return conformance.Run(trajectory, _layout(optimizer, model), shapes)

  def reference(self, way, name):
    with way.mode.runner() as runner:
      return problems.split_reference(runner, self.OPTIMIZERS[name],
                                      conformance.STEPS)

  def plain_state(self, name, variables):
    with helpers.TF1_GRAPH.runner() as runner:  # Slots are made when built.
      model = problems.Model.build(runner)
      optimizer = self.OPTIMIZERS[name](model.global_step)
      optimizer.apply_gradients(
          [(tf.zeros_like(getattr(model, v)), getattr(model, v))
           for v in variables], global_step=model.global_step)
      return _layout(optimizer, model)

  def zero_gradient_moves(self, name):
    with helpers.TF1_GRAPH.runner() as runner:
      model = problems.Model.build(runner)
      optimizer = self.OPTIMIZERS[name](model.global_step)
      runner.run(optimizer.apply_gradients(
          [(tf.zeros_like(model.x), model.x)], global_step=model.global_step))
      return not np.array_equal(runner.value(model.x), X0)

  def rows(self, way, name):
    if way.mode is helpers.XLA and name not in XLA_SPARSE:
      pytest.skip(f"TensorFlow has no XLA kernel for {name}'s sparse update")
    make = self.OPTIMIZERS[name]
    with way.mode.runner() as runner:
      table = runner.variable(cp.TABLE0, "table")
      gs = runner.variable(0, "gs", dtype=tf.int64, trainable=False)
      spec = tfpartial.train_only(table, cp.TRAIN_ROWS)
      loss = lambda: cp.loss(problems.poisoned(tf.gather(table, cp.IDS),
                                               conformance.FROZEN_LOOKUPS))
      run = runner.step(problems.entry_step(
          way.entry, runner, spec, make(gs), loss, [table], gs))
      trajectory = []
      for _ in range(cp.STEPS):
        run()
        trajectory.append(runner.value(table))
    reference = self._cached(("rows_reference", way.mode.name, name),
                             lambda: _rows_reference(way.mode, make))
    return trajectory, reference


def _rows_reference(mode, make):
  """The trainable rows in a variable of their own (`compact_problem`)."""
  with mode.runner() as runner:
    small = runner.variable(cp.split_start("rows"), "small")
    frozen = runner.variable(cp.TABLE0, "frozen", trainable=False)
    gs = runner.variable(0, "gs", dtype=tf.int64, trainable=False)
    optimizer = make(gs)

    def step():
      grads = runner.gradients(
          lambda: cp.loss(cp.split_lookup(small, frozen, "rows", cp.IDS,
                                          static=mode is helpers.XLA)),
          [small])
      if runner.graph:  # Every gradient before any update, as tfpartial.
        grads = tf.tuple(grads)
      return optimizer.apply_gradients(zip(grads, [small]), global_step=gs)

    run = runner.step(step)
    trajectory = []
    for _ in range(cp.STEPS):
      run()
      trajectory.append(runner.value(small))
    return trajectory
