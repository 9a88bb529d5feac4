"""`tfpartial verify` on checkpoints of real TF1, TF2 and Keras training."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import helpers
import problems
import tfpartial
from problems import X0
from tfpartial import _verify

V1 = tf.compat.v1


def _tf1_checkpoints(tmp_path, spec_text, use_tfpartial=True, steps=3):
  """A TF1 Saver run: checkpoint before and after training."""
  with tf.Graph().as_default():
    model = problems.Model(
        V1.Variable(X0, name="x"), V1.Variable(problems.B0, name="b"),
        V1.Variable(problems.C0, name="c"), V1.train.get_or_create_global_step())
    optimizer = V1.train.FtrlOptimizer(0.1, l1_regularization_strength=0.05)
    loss = model.loss(poison=False)
    spec = tfpartial.load_spec(spec_text, model.variables)
    train_op = (spec.minimize(optimizer, loss) if use_tfpartial
                else optimizer.minimize(loss))
    saver = V1.train.Saver()
    with V1.Session() as session:
      session.run(V1.global_variables_initializer())
      before = saver.save(session, str(tmp_path / "before" / "model.ckpt"))
      for _ in range(steps):
        session.run(train_op)
      after = saver.save(session, str(tmp_path / "after" / "model.ckpt"))
  return before, after


SPEC = '{"x": {"freeze": "0, :2"}, "b": {"freeze": "..."}}'


def _spec_file(tmp_path, text=SPEC):
  path = tmp_path / "spec.json"
  path.write_text(text)
  return str(path)


def _run(*args):
  result = subprocess.run(
      [sys.executable, "-m", "tfpartial", "verify", *map(str, args)],
      capture_output=True, text=True, timeout=300, check=False,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  return result.returncode, result.stdout, result.stderr


def test_tf1_saver_checkpoints_of_a_tfpartial_run_verify(tmp_path):
  before, after = _tf1_checkpoints(tmp_path, SPEC)
  code, out, err = _run(before, after, "--spec", _spec_file(tmp_path))
  assert code == 0, out + err
  assert "OK: every frozen element of 2 variable(s) is bit-for-bit unchanged" in out
  lines = {line.split()[0]: line.split() for line in out.splitlines()[1:3]}
  assert lines["x"][-4:] == ["2", "0", "-", "10/10"], out
  assert lines["b"][-4:] == ["2", "0", "-", "0/0"], out
  assert "reading 2/2: b (2,)" in err


def test_the_same_run_without_tfpartial_fails_verification(tmp_path):
  """Ftrl with l1 moves the 'frozen' x[0, :2] of a plain run: exit 1."""
  before, after = _tf1_checkpoints(tmp_path, SPEC, use_tfpartial=False)
  code, out, _ = _run(before, after, "--spec", _spec_file(tmp_path))
  assert code == 1, out
  assert "FAILED: 2 frozen element(s) of 'x' changed, the largest by" in out
  assert "FAILED: 2 frozen element(s) of 'b' changed" in out


def test_tampered_tf2_checkpoint_fails_and_names_the_change(tmp_path):
  x = tf.Variable(X0, name="x")
  emb = tf.Variable(np.zeros((50, 4), np.float32), name="emb")
  checkpoint = tf.train.Checkpoint(model=tf.Module())
  checkpoint.model.x, checkpoint.model.emb = x, emb
  spec = tfpartial.freeze(x, 1) | tfpartial.train_only(emb, np.s_[45:])
  optimizer = keras.optimizers.AdamW(0.1, weight_decay=0.3)
  before = checkpoint.write(str(tmp_path / "before"))
  for _ in range(3):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(tf.square(x - 1.0)) + tf.reduce_sum(
          tf.square(emb - 2.0))
    spec.apply_gradients(optimizer, zip(tape.gradient(loss, [x, emb]),
                                        [x, emb]))
  after = checkpoint.write(str(tmp_path / "after"))
  spec_path = str(tmp_path / "spec.json")
  spec.to_json(spec_path)
  code, out, err = _run(before, after, "--spec", spec_path)
  assert code == 0, out + err
  rows = {line.split()[0]: line for line in out.splitlines()}
  assert rows["emb"].endswith("20/20"), out  # Rows 45..49 moved.
  assert rows["x"].endswith("8/8"), out
  emb.assign_add(np.eye(50, 4, dtype=np.float32) * 0.5)  # Tamper: rows 0..3.
  tampered = checkpoint.write(str(tmp_path / "tampered"))
  code, out, _ = _run(before, tampered, "--spec", spec_path)
  assert code == 1
  assert "FAILED: 4 frozen element(s) of 'emb' changed, the largest by 0.5" in out


@helpers.needs_keras_3
def test_keras_weights_h5_by_layer_and_index(tmp_path):
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="d")])
  model.save_weights(tmp_path / "before.weights.h5")
  kernel = model.layers[0].kernel
  spec = tfpartial.freeze(kernel, 0)
  model.compile(optimizer=spec.wrap(keras.optimizers.AdamW(0.1)), loss="mse")
  model.fit(np.ones((4, 3)), np.ones((4, 2)), verbose=0)
  model.save_weights(tmp_path / "after.weights.h5")
  spec_path = _spec_file(tmp_path, '{"d/0": {"freeze": "0"}, "d/1": {"train_only": "..."}}')
  code, out, err = _run(tmp_path / "before.weights.h5",
                        tmp_path / "after.weights.h5", "--spec", spec_path)
  assert code == 0, out + err
  assert "2/4" in out or "4/4" in out


@pytest.mark.parametrize("case, message", [
    ("missing", r"cannot read the checkpoint"),
    ("unknown", r"'y' is not a variable of .* \(it has b, c, c/Ftrl, .*, x, x/Ftrl, x/Ftrl_1\)"),
    ("shape", r"the spec gives 'x' the shape \(2, 2\); the checkpoint holds \(3, 4\)"),
    ("malformed", r"cannot parse index '0,, 1' for 'x' in the spec"),
    ("bad_json", r"the spec is not valid JSON"),
    ("out_of_range", r"out of range for variable 'x' of shape \(3, 4\)"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, case, message):
  before, after = _tf1_checkpoints(tmp_path, SPEC, steps=1)
  spec = {"unknown": '{"y": {"freeze": "0"}}',
          "shape": '{"x": {"freeze": "0", "shape": [2, 2]}}',
          "malformed": '{"x": {"freeze": "0,, 1"}}',
          "bad_json": '{"x": ',
          "out_of_range": '{"x": {"freeze": "7"}}'}.get(case, SPEC)
  if case == "missing":
    after = str(tmp_path / "nowhere" / "model.ckpt")
  code, out, err = _run(before, after, "--spec", _spec_file(tmp_path, spec))
  assert code == 2, out + err
  error_lines = [l for l in err.splitlines() if l.startswith("tfpartial verify")]
  assert len(error_lines) == 1 and "Traceback" not in err, err
  import re
  assert re.search(message, error_lines[0]), error_lines[0]


def test_nan_that_stays_nan_is_unchanged_and_sign_of_zero_is_not():
  frozen = np.ones(3, bool)
  before = np.array([np.nan, 0.0, 1.0], np.float32)
  row = _verify._compare("v", (3,), frozen, before, before.copy())
  assert row.changed_frozen == 0
  row = _verify._compare("v", (3,), frozen, before,
                         np.array([np.nan, -0.0, 1.0], np.float32))
  assert row.changed_frozen == 1 and row.largest_change == 0.0
