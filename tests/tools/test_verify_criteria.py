"""`tfpartial verify` recomputes a spec's criteria from BEFORE, and says in
its table which criterion chose each variable's frozen elements."""

import json
import re

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

V1 = tf.compat.v1
_RNG = np.random.default_rng(7)
A0 = _RNG.normal(size=(4, 8)).astype(np.float32)
A0[np.abs(A0) < 0.5] = 0.0
A0[0, 0] = -0.0  # A pruned negative: its sign is a frozen bit.
B0 = _RNG.normal(size=(3, 5)).astype(np.float32)
C0 = _RNG.normal(size=(2, 5)).astype(np.float32)
D0 = _RNG.normal(size=(5,)).astype(np.float32)

def _main(capsys, *args):
  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  code = cli.main([str(arg) for arg in args])
  out, err = capsys.readouterr()
  return code, out, err


def _checkpoints(tmp_path, spec_text, use_tfpartial=True, tamper=None):
  """A TF1 Saver run of four variables, the spec loaded from its file."""
  spec_path = tmp_path / "spec.json"
  spec_path.write_text(spec_text)
  with tf.Graph().as_default():
    variables = [V1.Variable(value, name=name) for name, value in (
        ("layer/a", A0), ("pair/b", B0), ("pair/c", C0), ("layer/d", D0))]
    loss = sum(tf.reduce_sum(tf.cos(v) * (v + 1.0)) for v in variables)
    optimizer = V1.train.AdamOptimizer(0.1)
    saver = V1.train.Saver()
    with V1.Session() as session:
      session.run(V1.global_variables_initializer())
      before = saver.save(session, str(tmp_path / "before" / "model.ckpt"))
      # A criterion reads the values in the default session (this one).
      spec = tfpartial.load_spec(str(spec_path), variables)
      train_op = (spec.minimize(optimizer, loss) if use_tfpartial
                  else optimizer.minimize(loss))
      session.run(V1.variables_initializer(optimizer.variables()))
      for _ in range(3):
        session.run(train_op)
      if tamper is not None:
        session.run(variables[0][tamper].assign(-variables[0][tamper]))
      after = saver.save(session, str(tmp_path / "after" / "model.ckpt"))
  return before, after, spec_path


CRITERIA_SPEC = json.dumps({
    "layer/a": {"freeze": {"where": "zero"}, "compact": True},
    "pair/*": {"train_only": {"top": 0.2, "by": "magnitude",
                              "scope": "entry"}},
    "layer/d": {"train_only": {"random": 0.4, "seed": 3}},
})


def test_a_criterion_spec_trains_and_verifies_without_any_npy(tmp_path,
                                                               capsys):
  before, after, spec = _checkpoints(tmp_path, CRITERIA_SPEC)
  assert not list(tmp_path.rglob("*.npy"))
  code, out, _ = _main(capsys, "verify", before, after, "--spec", spec)
  assert code == 0, out
  lines = out.splitlines()
  assert re.split(r"\s{2,}", lines[2])[-1] == "criterion"
  rows = {cells[0]: cells for cells in (re.split(r"\s{2,}", line.strip())
                                        for line in lines[3:7])}
  assert rows["layer/a"][-1] == "freeze where zero"
  assert rows["layer/a"][2] == str(int((A0 == 0).sum()))
  assert rows["pair/b"][-1] == (
      "train_only top 20% by magnitude across 'pair/*'")
  assert rows["layer/d"][-1] == "train_only random 40% (seed 3)"
  assert "OK: every frozen element of 4 variable(s)" in out
  # Across the entry: 20% of b and c's 25 elements together, 5 train.
  assert sum(int(rows[n][5].split("/")[1]) for n in ("pair/b", "pair/c")) == 5


def test_the_same_run_without_tfpartial_fails_verification(tmp_path, capsys):
  before, after, spec = _checkpoints(tmp_path, CRITERIA_SPEC,
                                     use_tfpartial=False)
  code, out, _ = _main(capsys, "verify", before, after, "--spec", spec)
  assert code == 1
  assert "FAILED: " in out and "of 'layer/a' changed" in out


def test_a_zero_whose_sign_flipped_fails_verification(tmp_path, capsys):
  before, after, spec = _checkpoints(tmp_path, CRITERIA_SPEC, tamper=(0, 0))
  code, out, _ = _main(capsys, "verify", before, after, "--spec", spec)
  assert code == 1
  assert "FAILED: 1 frozen element(s) of 'layer/a' changed, the largest by 0" \
      in out


def test_to_json_of_the_bound_spec_verifies_the_same(tmp_path, capsys):
  before, after, spec_path = _checkpoints(tmp_path, CRITERIA_SPEC)
  with tf.Graph().as_default():
    variables = [V1.Variable(value, name=name) for name, value in (
        ("layer/a", A0), ("pair/b", B0), ("pair/c", C0), ("layer/d", D0))]
    with V1.Session() as session:
      session.run(V1.global_variables_initializer())
      spec = tfpartial.load_spec(str(spec_path), variables)
      spec.to_json(tmp_path / "written.json")
  written = json.loads((tmp_path / "written.json").read_text())
  assert written["pair/c"]["train_only"]["group"] == "pair/*"
  code, first, _ = _main(capsys, "verify", before, after, "--spec", spec_path)
  code_written, second, _ = _main(capsys, "verify", before, after, "--spec",
                                  tmp_path / "written.json")
  assert code == code_written == 0
  assert first.splitlines()[2:] == second.splitlines()[2:]


@pytest.mark.parametrize("criterion, message", [
    ({"n_m": [2, 3]}, r"'layer/a' in the spec: \"n_m\" \[2, 3\] needs M = 3 "
     r"to divide axis -1 of variable 'layer/a' of shape \(4, 8\), of length 8"),
    ({"top_k": 33}, r"'top_k' 33 asks for more elements than variable "
     r"'layer/a' of shape \(4, 8\) has \(32\)"),
    ({"top": 2}, r"'top' must be a fraction F with 0 < F <= 1; got 2"),
])
def test_a_criterion_that_does_not_fit_is_bad_input(tmp_path, capsys,
                                                    criterion, message):
  before, after, _ = _checkpoints(tmp_path, CRITERIA_SPEC)
  spec = tmp_path / "bad.json"
  spec.write_text(json.dumps({"layer/a": {"freeze": criterion}}))
  code, out, err = _main(capsys, "verify", before, after, "--spec", spec)
  assert code == 2 and not out
  assert "Traceback" not in err
  assert re.search(message, err), err


@helpers.needs_keras_3
def test_a_keras_fine_tune_with_criteria_verifies_from_its_weight_files(
    tmp_path, capsys):
  import keras  # pylint: disable=g-import-not-at-top
  keras.utils.set_random_seed(0)
  model = keras.Sequential([keras.Input((6,)),
                            keras.layers.Dense(8, name="hidden"),
                            keras.layers.Dense(4, name="out")])
  kernel = model.get_layer("hidden").kernel
  start = kernel.numpy()
  start[:, ::2] = 0.0  # Pruned half.
  kernel.assign(start)
  spec_path = tmp_path / "spec.json"
  spec_path.write_text(json.dumps({
      "**/hidden/kernel": {"freeze": {"where": "zero"}},
      "**/out/kernel": {"train_only": {"n_m": [2, 4], "axis": -1},
                        "compact": True},
      "**/bias": {"freeze": "..."}}))
  spec = tfpartial.load_spec(spec_path, model)
  model.save_weights(tmp_path / "before.weights.h5")
  model.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.05)), loss="mse")
  model.fit(np.ones((16, 6), np.float32), np.zeros((16, 4), np.float32),
            epochs=2, verbose=0)
  model.save_weights(tmp_path / "after.weights.h5")
  code, out, _ = _main(capsys, "verify", tmp_path / "before.weights.h5",
                       tmp_path / "after.weights.h5", "--spec", spec_path)
  assert code == 0, out
  assert "train_only 2:4 along axis -1" in out
  helpers.assert_same_bits(kernel.numpy()[:, ::2], start[:, ::2], "zeros")
