"""TF1 partitioned tables as one variable, through every way a graph trains.

The table is split into parts (`partitioned_problem.py`) and looked up by
`tf.compat.v1.nn.embedding_lookup` with `partition_strategy` "div" and
"mod"; the spec freezes the rows the lookup reads for `FROZEN_IDS`. After
training those lookups are bit for bit what they were, and the others
follow the split-variable reference. Checkpoints: the Saver stores the
table whole (`emb`), which `to_json` names, `load_spec` binds (into a
graph of another number of parts too) and `tfpartial verify` reads.
"""

import json

import numpy as np
import pytest
import tensorflow as tf

import helpers
import partitioned_problem as pp
import tfpartial
from tfpartial import cli

STRATEGIES = ("div", "mod")
STEPS = 3
_v1 = tf.compat.v1.train


def _spec(problem, kind="freeze", compact=False):
  if kind == "freeze":
    return tfpartial.freeze(problem.table, pp.FROZEN_IDS,
                            partition_strategy=problem.strategy)
  return tfpartial.train_only(problem.table, pp.TRAIN_IDS, compact=compact,
                              partition_strategy=problem.strategy)


def _minimize(spec, optimizer, problem):
  return spec.minimize(optimizer, problem.loss)


def _wrap_minimize(spec, optimizer, problem):
  return spec.wrap(optimizer).minimize(problem.loss)


def _wrap_compute_apply(spec, optimizer, problem):
  wrapped = spec.wrap(optimizer)
  return wrapped.apply_gradients(wrapped.compute_gradients(problem.loss))


def _apply_gradients(spec, optimizer, problem):
  parts = list(problem.table)
  grads = tf.compat.v1.gradients(problem.loss, parts)
  return spec.apply_gradients(optimizer, zip(grads, parts))


def _minimize_var_list(spec, optimizer, problem):
  return spec.minimize(optimizer, problem.loss, var_list=[problem.table])


WAYS = {"minimize": _minimize, "wrap_minimize": _wrap_minimize,
        "wrap_compute_apply": _wrap_compute_apply,
        "apply_gradients": _apply_gradients,
        "minimize_var_list": _minimize_var_list}
OPTIMIZERS = {
    "adam": lambda: _v1.AdamOptimizer(0.1),
    "ftrl_shrinkage": lambda: _v1.FtrlOptimizer(
        0.3, l1_regularization_strength=0.01,
        l2_shrinkage_regularization_strength=0.1),
    "momentum": lambda: _v1.MomentumOptimizer(0.05, 0.9)}


def _train(runner, problem, spec, way, optimizer):
  op = WAYS[way](spec, optimizer, problem)
  start = runner.run(problem.looked)
  for _ in range(STEPS):
    runner.run(op)
  return start, runner.run(problem.looked)


def _check_trained(runner, start, after, optimizer, ulps=0):
  helpers.assert_same_bits(after[pp.FROZEN_IDS], start[pp.FROZEN_IDS],
                           "the frozen ids' rows")
  expected = pp.reference(start, optimizer, STEPS, runner.session)
  assert (after[pp.TRAIN_IDS] != start[pp.TRAIN_IDS]).all()
  if ulps:
    np.testing.assert_array_max_ulp(after[pp.TRAIN_IDS], expected, ulps)
  else:
    helpers.assert_same_bits(after[pp.TRAIN_IDS], expected,
                             "the split-variable reference")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("way", sorted(WAYS))
def test_the_ids_a_lookup_reads_stay_frozen(graph_mode, strategy, way):
  with graph_mode.runner() as runner:
    problem = pp.Problem(strategy, use_resource=graph_mode.use_resource)
    start, after = _train(runner, problem, _spec(problem), way,
                          _v1.AdamOptimizer(0.1))
    _check_trained(runner, start, after, _v1.AdamOptimizer(0.1))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_train_only_with_each_optimizer(graph_mode, strategy, name):
  with graph_mode.runner() as runner:
    problem = pp.Problem(strategy, use_resource=graph_mode.use_resource)
    start, after = _train(runner, problem, _spec(problem, "train_only"),
                          "wrap_minimize", OPTIMIZERS[name]())
    _check_trained(runner, start, after, OPTIMIZERS[name]())


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_compact_rows_train_a_small_variable_per_part(strategy):
  with helpers.TF1_GRAPH.runner() as runner:
    problem = pp.Problem(strategy)
    spec = _spec(problem, "train_only", compact=True)
    start, after = _train(runner, problem, spec, "minimize",
                          _v1.AdamOptimizer(0.1))
    # Bit for bit: each small variable gets the slices of its part's
    # gradient, as the reference's variable gets them.
    _check_trained(runner, start, after, _v1.AdamOptimizer(0.1))
    slots = {v.op.name for v in tf.compat.v1.global_variables()
             if "Adam" in v.op.name}
  # A part with frozen rows trains through a small variable of its rows;
  # one whose rows all train is trained as it is.
  frozen = spec.frozen_mask(problem.table).all(axis=1)
  for number, rows in enumerate(np.split(frozen, [3, 6, 8])):
    part = f"emb/part_{number}"
    assert (f"{part}/Adam" in slots) == (not rows.any()), (part, slots)
    assert (f"{part}_tfpartial_compact/Adam" in slots) == (
        rows.any() and not rows.all()), (part, slots)


def test_mask_zeroes_the_frozen_ids_rows():
  with helpers.TF1_GRAPH.runner() as runner:
    problem = pp.Problem("mod")
    spec = _spec(problem)
    parts = list(problem.table)
    grads = tf.compat.v1.gradients(problem.loss, parts)
    masked = spec.mask(grads, parts)
    pairs = spec.mask_gradients(list(zip(grads, parts)))
    assert all(isinstance(g, tf.IndexedSlices) for g in masked)
    full = runner.run(tf.concat([tf.convert_to_tensor(g) for g in masked], 0))
    kept = runner.run({v.name: tf.convert_to_tensor(g) for g, v in pairs})
  rows = spec.frozen_mask(problem.table).all(axis=1)
  helpers.assert_same_bits(full[rows], np.zeros_like(full[rows]))
  assert (full[~rows] != 0).all()
  # With "mod" part 1 holds ids 1, 5 and 9, all frozen: it is left out.
  assert sorted(kept) == ["emb/part_0:0", "emb/part_2:0", "emb/part_3:0"]
  helpers.assert_same_bits(kept["emb/part_2:0"], full[6:8])


def test_a_late_spec_binds_the_table_by_its_checkpoint_name(graph_mode):
  with graph_mode.runner() as runner:
    problem = pp.Problem("div", use_resource=graph_mode.use_resource)
    text = json.dumps({"emb": {"freeze": "[1, 2, 5, 9]"}})
    late = tfpartial.load_spec(text)
    start, after = _train(runner, problem, late, "wrap_minimize",
                          _v1.AdamOptimizer(0.1))
    _check_trained(runner, start, after, _v1.AdamOptimizer(0.1))


def test_a_late_spec_naming_no_table_says_the_names():
  with helpers.TF1_GRAPH.runner():
    problem = pp.Problem("div")
    late = tfpartial.load_spec(json.dumps({"embs": {"freeze": "0"}}))
    with pytest.raises(ValueError, match=r"'embs'.*nearest names are 'emb'"):
      late.wrap(_v1.AdamOptimizer(0.1)).minimize(problem.loss)


def _save(runner, saver, directory):
  return saver.save(runner.session, str(directory / "ckpt"))


def _verify(capsys, before, after, spec_path):
  code = cli.main(["verify", before, after, "--spec", str(spec_path)])
  return code, capsys.readouterr().out


def test_saver_checkpoints_verify_and_restore_into_other_parts(
    tmp_path, capsys):
  spec_path = tmp_path / "spec.json"
  with helpers.TF1_GRAPH.runner() as runner:
    problem = pp.Problem("mod")
    spec = _spec(problem)
    spec.to_json(spec_path)
    op = spec.wrap(_v1.AdagradOptimizer(0.5)).minimize(problem.loss)
    saver = tf.compat.v1.train.Saver()
    runner.run(op)
    before = _save(runner, saver, tmp_path / "before")
    runner.run(op)
    after = _save(runner, saver, tmp_path / "after")
    # Checkpoint row 3, frozen (id 1 with "mod"), is row 0 of part 1.
    assert spec.frozen_mask(problem.table)[3].all()
    runner.run(tf.compat.v1.scatter_add(
        list(problem.table)[1], [0], [[1.0] * pp.DIM]))
    changed = _save(runner, saver, tmp_path / "changed")
  assert dict(tf.train.list_variables(after))["emb"] == [pp.ROWS, pp.DIM]
  # Ids 1, 5 and 9 are part 1 (checkpoint rows 3-5) with "mod", id 2 row 6.
  assert json.loads(spec_path.read_text()) == {
      "emb": {"freeze": "3:7", "shape": [pp.ROWS, pp.DIM]}}
  code, out = _verify(capsys, before, after, spec_path)
  assert code == 0, out
  code, out = _verify(capsys, after, changed, spec_path)
  assert code == 1 and "emb" in out, out
  with helpers.TF1_GRAPH.runner() as runner:
    problem = pp.Problem("mod", parts=2)
    runner.run(tf.no_op())  # Initialized first, then restored.
    tf.compat.v1.train.Saver().restore(runner.session, after)
    helpers.assert_same_bits(runner.run(tf.compat.v1.nn.embedding_lookup(
        problem.table, pp.IDS, partition_strategy="div")),
                             _checkpoint_rows(after))
    again = tfpartial.load_spec(spec_path, tf.compat.v1.global_variables())
    frozen = spec.frozen_mask(spec.variables[0])
    assert np.array_equal(again.frozen_mask(problem.table), frozen)
    runner.run(again.wrap(_v1.AdagradOptimizer(0.5)).minimize(problem.loss))
    rows = runner.run(tf.concat(list(problem.table), 0))
  restored = _checkpoint_rows(after)
  helpers.assert_same_bits(rows[frozen], restored[frozen], "frozen rows")
  assert (rows[~frozen] != restored[~frozen]).all()


def _checkpoint_rows(path):
  return tf.train.load_variable(path, "emb")


def test_the_wrapped_checkpoint_has_the_plain_layout(tmp_path):
  layouts = []
  for run in ("plain", "tfpartial"):
    with helpers.TF1_GRAPH.runner() as runner:
      problem = pp.Problem("div")
      optimizer = _v1.AdamOptimizer(0.1)
      if run == "tfpartial":
        optimizer = _spec(problem).wrap(optimizer)
      runner.run(optimizer.minimize(problem.loss))
      path = _save(runner, tf.compat.v1.train.Saver(), tmp_path / run)
      layouts.append(sorted(tf.train.list_variables(path)))
  assert layouts[0] == layouts[1]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_compact_element_masks_train_a_vector_per_part(strategy):
  """An element mask of the table (in the lookup's ids), compact: each part
  with elements of both kinds trains a vector of its trainable elements;
  the lookups of frozen elements keep their bits."""
  train = np.random.default_rng(3).random((pp.ROWS, pp.DIM)) < 0.4
  with helpers.TF1_GRAPH.runner() as runner:
    problem = pp.Problem(strategy)
    spec = tfpartial.train_only(problem.table, train, compact=True,
                                partition_strategy=strategy)
    op = spec.minimize(_v1.AdamOptimizer(0.1), problem.loss)
    session = runner.session
    session.run(tf.compat.v1.global_variables_initializer())
    start = session.run(problem.looked)
    for _ in range(STEPS):
      session.run(op)
    after = session.run(problem.looked)
    slots = [v for v in tf.compat.v1.global_variables()
             if v.op.name.endswith("_tfpartial_compact/Adam")]
  helpers.assert_same_bits(after[~train], start[~train], "frozen elements")
  assert (after[train] != start[train]).all(), "a trainable element is stuck"
  assert sum(int(v.shape[0]) for v in slots) == int(train.sum()), slots
