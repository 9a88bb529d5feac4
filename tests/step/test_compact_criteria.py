"""`compact=True` with every criterion: the elements a criterion selects
train through a small variable, exactly as the split-variable reference
(those elements in a variable of their own, same optimizer) trains them,
and every other element keeps its bits (zeros their sign), in every exact
mode."""

import json

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

STEPS = 3
_RNG = np.random.default_rng(3)
W0 = _RNG.normal(size=(6, 8)).astype(np.float32)
W0[np.abs(W0) < 0.6] = 0.0
W0[0, :3] = -0.0  # Pruned negatives: their sign must stay.
V0 = _RNG.normal(size=(4, 4)).astype(np.float32)
X = _RNG.normal(size=(5, 6)).astype(np.float32)

CRITERIA = {
    "zeros_file": lambda: ("freeze", {"where": "zero"}),
    "zeros_python": lambda: ("freeze_across", tfpartial.zeros()),
    "largest": lambda: ("train_only", tfpartial.largest(0.2)),
    "smallest_k": lambda: ("train_only", tfpartial.smallest(k=7)),
    "n_of_m": lambda: ("train_only", tfpartial.n_of_m(2, 4)),
    "random": lambda: ("train_only", tfpartial.random_subset(0.3, seed=5)),
    "across": lambda: ("across", tfpartial.largest(0.15)),
}


def _loss(w, v):
  return tf.reduce_sum(tf.square(tf.matmul(X, w))) + tf.reduce_sum(
      tf.sin(v) * v)


def _spec(kind, criterion, w, v):
  if kind == "across":
    return tfpartial.train_only_across([w, v], criterion, compact=True)
  if kind == "freeze_across":
    return (tfpartial.freeze_across([w], criterion, compact=True)
            | tfpartial.freeze(v))
  if kind == "freeze":  # A spec file's `"freeze": CRITERION, "compact"`.
    return tfpartial.load_spec(json.dumps({
        "w": {"freeze": criterion, "compact": True},
        "v": {"freeze": "..."}}), [w, v])
  return tfpartial.train_only(w, criterion, compact=True) | tfpartial.freeze(v)


def _reference(runner, trains_w, trains_v):
  """The split reference: the trainable elements in variables of their own."""
  w_fixed = runner.variable(W0, "w_fixed", trainable=False)
  v_fixed = runner.variable(V0, "v_fixed", trainable=False)
  t = runner.variable(W0[trains_w], "t")
  u = runner.variable(V0[trains_v], "u")
  optimizer = tf.compat.v1.train.AdamOptimizer(0.05)
  where_w, where_v = np.argwhere(trains_w), np.argwhere(trains_v)

  def loss():
    return _loss(tf.tensor_scatter_nd_update(w_fixed, where_w, t),
                 tf.tensor_scatter_nd_update(v_fixed, where_v, u))

  def step():
    grads = runner.gradients(loss, [t, u])
    grads = [tf.zeros_like(var) if g is None else g
             for g, var in zip(grads, [t, u])]
    if runner.graph:
      grads = tf.tuple(grads)
    return optimizer.apply_gradients(zip(grads, [t, u]))

  run = runner.step(step)
  trajectory = []
  for _ in range(STEPS):
    run()
    trajectory.append((runner.value(t), runner.value(u)))
  return trajectory


@pytest.mark.parametrize("name", sorted(CRITERIA))
def test_compact_criterion_follows_the_split_reference(exact_mode, name):
  with exact_mode.runner() as runner:
    w = runner.variable(W0, "w")
    v = runner.variable(V0, "v")
    runner.value(w), runner.value(v)  # A TF1 graph's: initialized.
    spec = _spec(*CRITERIA[name](), w, v)
    trains_w, trains_v = ~spec.frozen_mask(w), ~spec.frozen_mask(v)
    assert 0 < trains_w.sum() < W0.size
    optimizer = tf.compat.v1.train.AdamOptimizer(0.05)
    run = runner.step(lambda: spec.apply_gradients(optimizer, zip(
        runner.gradients(lambda: _loss(w, v), [w, v]), [w, v])))
    trajectory = []
    for _ in range(STEPS):
      run()
      trajectory.append((runner.value(w), runner.value(v)))
    shapes = {tuple(s.shape.as_list()) for s in optimizer.variables()}
    reference = _reference(runner, trains_w, trains_v)
  assert W0.shape not in shapes, shapes  # The optimizer never saw all of w.
  for step, ((w_now, v_now), (t, u)) in enumerate(
      zip(trajectory, reference), start=1):
    helpers.assert_same_bits(w_now[~trains_w], W0[~trains_w], f"w, {step}")
    helpers.assert_same_bits(v_now[~trains_v], V0[~trains_v], f"v, {step}")
    helpers.assert_same_bits(w_now[trains_w], t, f"w trains, {step}")
    helpers.assert_same_bits(v_now[trains_v], u, f"v trains, {step}")
  assert not np.array_equal(trajectory[-1][0][trains_w], W0[trains_w])
