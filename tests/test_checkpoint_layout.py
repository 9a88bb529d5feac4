"""Checkpoints move both ways: plain -> tfpartial and tfpartial -> plain.

A job adds tfpartial to a running training, or drops it, and resumes from
the other's checkpoint. With `spec.wrap`, a checkpoint has the plain run's
layout in every family, so the restore succeeds with nothing unmatched and
nothing left over, and training goes on with the frozen elements as
restored. `spec.minimize` and `spec.apply_gradients` leave a fully frozen
variable out of the update, so its optimizer slots are missing: that
difference is pinned here too, as documented. Per family (v1 with a TF1
`Saver` and with `tf.train.Checkpoint`; Keras 3 and tf_keras with their
weights files, `model.save` and TF checkpoints), entry point and spec
kind: element, row, whole variable.

The model: an embedding table `emb` (5, 3) looked up by id (sparse
gradients), a kernel `w` (6, 2) and a bias `b` (2,); the spec kinds freeze
rows 0-2 of `emb`, three elements of `w`, or all of `b`.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

IDS = np.array([[0, 3], [4, 1], [2, 4]], np.int32)
Y = np.array([[1.0, -1.0], [0.5, 2.0], [-1.5, 0.5]], np.float32)
_RNG = np.random.default_rng(20261201)
EMB0 = _RNG.normal(size=(5, 3)).astype(np.float32)
W0 = _RNG.normal(size=(6, 2)).astype(np.float32)
B0 = _RNG.normal(size=(2,)).astype(np.float32)
W_FROZEN = np.zeros((6, 2), bool)
W_FROZEN[[0, 2, 5], [1, 0, 1]] = True
EMB_FROZEN = np.zeros((5, 3), bool)
EMB_FROZEN[:3] = True
KINDS = ("element", "row", "whole")
STEPS = 2


def _frozen(kind):
  """kind -> (index of the variable among emb, w, b; frozen mask)."""
  return {"element": (1, W_FROZEN), "row": (0, EMB_FROZEN),
          "whole": (2, np.ones(B0.shape, bool))}[kind]


def _spec(kind, variables):
  emb, w, b = variables
  return {"element": lambda: tfpartial.freeze(w, W_FROZEN),
          "row": lambda: tfpartial.freeze(emb, np.s_[:3]),
          "whole": lambda: tfpartial.freeze(b)}[kind]()


def _loss(emb, w, b):
  features = tf.reshape(tf.gather(emb, IDS), [-1, 6])
  return tf.reduce_sum(tf.square(tf.matmul(features, w) + b - Y))


def _check_frozen(kind, before, after, what):
  position, frozen = _frozen(kind)
  helpers.assert_same_bits(after[position][frozen], before[position][frozen],
                           what)


def _moved(before, after):
  return any(not np.array_equal(x, y) for x, y in zip(before, after))


# --- tf.compat.v1 optimizers: a TF1 Saver in a graph -------------------------

V1_ENTRIES = ("wrap_minimize", "wrap_compute_apply", "minimize",
              "apply_gradients")


def _v1_train_op(entry, spec, optimizer, variables, global_step):
  loss = _loss(*variables)
  if entry is None:
    return optimizer.minimize(loss, global_step=global_step)
  if entry == "wrap_minimize":
    return spec.wrap(optimizer).minimize(loss, global_step=global_step)
  if entry == "wrap_compute_apply":
    wrapped = spec.wrap(optimizer)
    return wrapped.apply_gradients(wrapped.compute_gradients(loss),
                                   global_step=global_step)
  if entry == "minimize":
    return spec.minimize(optimizer, loss, global_step=global_step)
  grads = tf.compat.v1.gradients(loss, variables)
  return spec.apply_gradients(optimizer, zip(grads, variables),
                              global_step=global_step)


def _v1_graph_run(directory, kind, entry, restore_from=None):
  """Builds the model and a train op (`entry` None: plain Adam), restores
  `restore_from` if given, trains, saves. Returns the checkpoint path, the
  values restored, the values after training, and the graph's variable
  names (what its Saver writes)."""
  with helpers.TF1_GRAPH.runner() as runner:
    variables = [runner.variable(value, name) for value, name in
                 ((EMB0, "emb"), (W0, "w"), (B0, "b"))]
    global_step = tf.compat.v1.train.get_or_create_global_step()
    spec = _spec(kind, variables)
    train_op = _v1_train_op(entry, spec, tf.compat.v1.train.AdamOptimizer(0.1),
                            variables, global_step)
    saver = tf.compat.v1.train.Saver()
    runner.run(tf.no_op())  # Initializes everything once.
    if restore_from is not None:
      saver.restore(runner.session, restore_from)
    start = runner.run(variables)
    for _ in range(STEPS):
      runner.run(train_op)
    end = runner.run(variables)
    path = saver.save(runner.session, str(directory / "ckpt"),
                      global_step=global_step)
    names = sorted(v.op.name for v in tf.compat.v1.global_variables())
  return path, start, end, names


def _keys(path):
  return sorted(name for name, _ in tf.train.list_variables(path))


def _layout_kept(entry, kind):
  return entry.startswith("wrap") or kind != "whole"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", V1_ENTRIES)
def test_v1_saver_plain_to_tfpartial_and_back(tmp_path, entry, kind):
  plain, _, plain_end, plain_names = _v1_graph_run(tmp_path / "plain", kind,
                                                   None)
  # Add tfpartial to the running job: resume from the plain checkpoint.
  path, start, end, names = _v1_graph_run(tmp_path / "partial", kind, entry,
                                          restore_from=plain)
  for restored, saved in zip(start, plain_end):
    helpers.assert_same_bits(restored, saved, "restored from plain")
  _check_frozen(kind, start, end, "frozen after resuming with tfpartial")
  assert _moved(start, end)
  slots_of_b = {"b/Adam", "b/Adam_1"}
  if _layout_kept(entry, kind):
    assert names == plain_names and _keys(path) == _keys(plain)
  else:  # Documented: fully frozen b has no slots with these entry points.
    assert set(plain_names) - set(names) == slots_of_b
    assert set(_keys(plain)) - set(_keys(path)) == slots_of_b
  # Drop tfpartial again: resume plain from the tfpartial checkpoint.
  if _layout_kept(entry, kind):
    _, again, _, _ = _v1_graph_run(tmp_path / "again", kind, None,
                                   restore_from=path)
    for restored, saved in zip(again, end):
      helpers.assert_same_bits(restored, saved, "restored from tfpartial")
  else:
    with pytest.raises(tf.errors.NotFoundError, match="b/Adam"):
      _v1_graph_run(tmp_path / "again", kind, None, restore_from=path)
