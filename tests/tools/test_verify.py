"""`tfpartial verify` on checkpoints of real TF1, TF2 and Keras training."""

import io
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import helpers
import processes
import problems
import tfpartial
from problems import X0
from tfpartial._tools.verify import _verify

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
  result = processes.run(
      [sys.executable, "-m", "tfpartial", "verify", *map(str, args)],
      timeout=300,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  return result.returncode, result.stdout, result.stderr


def test_tf1_saver_checkpoints_of_a_tfpartial_run_verify(tmp_path):
  before, after = _tf1_checkpoints(tmp_path, SPEC)
  code, out, err = _run(before, after, "--spec", _spec_file(tmp_path))
  assert code == 0, out + err
  assert "OK: every frozen element of 2 variable(s) is bit-for-bit unchanged" in out
  lines = {line.split()[0]: line.split() for line in out.splitlines()[3:5]}
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
  # AdamW moves every trainable element on its first step: 4 of d/0's 6,
  # and both of d/1's.
  rows = [line.split() for line in out.splitlines()
          if line.startswith(("d/0 ", "d/1 "))]
  assert rows == [["d/0", "(3,", "2)", "2", "0", "-", "4/4"],
                  ["d/1", "(2,)", "0", "0", "-", "2/2"]], out


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


# --- Never a wrong verdict (issue 13) --------------------------------------


def _main(capsys, *args):
  """`tfpartial ARGS` in this process: (exit code, stdout, stderr)."""
  from tfpartial import cli  # pylint: disable=g-import-not-at-top
  code = cli.main([str(arg) for arg in args])
  out, err = capsys.readouterr()
  return code, out, err


def _one_error_line(err):
  """The error is one line naming the problem, no traceback; before it
  there may only be progress lines (the error came from reading data)."""
  lines = [line for line in err.splitlines()
           if line.strip() and not line.startswith("reading ")]
  assert "Traceback" not in err, err
  assert len(lines) == 1 and lines[0].startswith("tfpartial verify: error: "), err
  return lines[0]


def _tf2_pair(tmp_path, before, after, name="v"):
  """TF2 checkpoints holding `before`, then `after`, as variable `name`."""
  paths = []
  for tag, value in (("before", before), ("after", after)):
    variable = tf.Variable(value)
    paths.append(tf.train.Checkpoint(**{name: variable}).write(
        str(tmp_path / tag / "ckpt")))
  return paths


def _bf16(values):
  return np.array(values, np.float32).astype(tf.bfloat16.as_numpy_dtype)


NAN_BITS = np.array([0x7FC00001], np.uint32).view(np.float32)[0]  # A payload.

# (dtype, before, after, how many frozen elements changed). Values are
# compared by their bits: a NaN that stays the same NaN is unchanged, and
# -0.0 -> 0.0 is a change, whatever the dtype.
DTYPE_CASES = {
    "bfloat16_nan_stays": (_bf16([np.nan, 1.0]), _bf16([np.nan, 1.0]), 0),
    "bfloat16_sign_of_zero": (_bf16([-0.0, 1.0]), _bf16([0.0, 1.0]), 1),
    "bfloat16_value": (_bf16([1.0, 1.0]), _bf16([1.0, 2.0]), 1),
    "float16_sign_of_zero": (np.array([-0.0, 2], np.float16),
                             np.array([0.0, 2], np.float16), 1),
    "float32_nan_payload_stays": (np.array([NAN_BITS, 1], np.float32),
                                  np.array([NAN_BITS, 1], np.float32), 0),
    "float32_nan_to_other_nan": (np.array([NAN_BITS, 1], np.float32),
                                 np.array([np.nan, 1], np.float32), 1),
    "float64_sign_of_zero": (np.array([0.0, 1.0]), np.array([-0.0, 1.0]), 1),
    "complex64_nan_stays": (np.array([complex(np.nan, 1), 1], np.complex64),
                            np.array([complex(np.nan, 1), 1], np.complex64), 0),
    "complex128_nan_stays": (np.array([complex(1, np.nan), 2j]),
                             np.array([complex(1, np.nan), 2j]), 0),
    "complex128_imaginary_sign_of_zero": (
        np.array([complex(1, 0.0), 2j]), np.array([complex(1, -0.0), 2j]), 1),
    "int64": (np.array([2**62, 7], np.int64),
              np.array([2**62 + 1, 7], np.int64), 1),
    "uint8": (np.array([255, 0], np.uint8), np.array([255, 1], np.uint8), 1),
    "bool": (np.array([True, False]), np.array([False, False]), 1),
    "string": (np.array([b"cat", b"dog"], object),
               np.array([b"cat", b"cow"], object), 1),
    "string_unchanged": (np.array([b"cat", b""], object),
                         np.array([b"cat", b""], object), 0),
}


@pytest.mark.parametrize("case", DTYPE_CASES)
def test_every_dtype_is_compared_by_its_bits(tmp_path, capsys, case):
  before, after, changed = DTYPE_CASES[case]
  if before.dtype == object:
    before, after = tf.constant(before), tf.constant(after)
  first, second = _tf2_pair(tmp_path, before, after)
  spec = _spec_file(tmp_path, '{"v": {"freeze": "..."}}')
  code, out, err = _main(capsys, "verify", first, second, "--spec", spec)
  assert code == (1 if changed else 0), out + err
  row = next(line for line in out.splitlines() if line.startswith("v "))
  assert row.split()[-3] == str(changed), out
  if changed:
    assert f"FAILED: {changed} frozen element(s) of 'v' changed" in out


def test_largest_change_of_complex_and_string_values(capsys, tmp_path):
  first, second = _tf2_pair(tmp_path, np.array([1 + 1j, 0j]),
                            np.array([1 + 1j, 3 + 4j]))
  spec = _spec_file(tmp_path, '{"v": {"freeze": "..."}}')
  code, out, _ = _main(capsys, "verify", first, second, "--spec", spec)
  assert code == 1 and "changed, the largest by 5\n" in out, out
  first, second = _tf2_pair(tmp_path / "s", tf.constant([b"a"]),
                            tf.constant([b"b"]))
  code, out, _ = _main(capsys, "verify", first, second, "--spec", spec)
  assert code == 1 and "FAILED: 1 frozen element(s) of 'v' changed\n" in out


@pytest.mark.parametrize("before_dtype, after_dtype", [
    (np.float32, np.float64), (np.int32, np.float32), (np.float16, np.float32)])
def test_a_different_dtype_is_bad_input(tmp_path, capsys, before_dtype,
                                        after_dtype):
  first, second = _tf2_pair(tmp_path, np.zeros(3, before_dtype),
                            np.zeros(3, after_dtype))
  spec = _spec_file(tmp_path, '{"v": {"freeze": "0"}}')
  code, out, err = _main(capsys, "verify", first, second, "--spec", spec)
  assert code == 2, out + err
  line = _one_error_line(err)
  before_name, after_name = (np.dtype(before_dtype).name,
                             np.dtype(after_dtype).name)
  assert (f"'v' is {before_name} in BEFORE but {after_name} in AFTER"
          in line), line


def _nested_heads():
  """Two sub-models, each with a layer named `head` (Keras 3 paths clash)."""
  def sub_model(name):
    inputs = keras.Input((3,))
    return keras.Model(inputs, keras.layers.Dense(2, name="head")(inputs),
                       name=name)
  inputs = keras.Input((3,))
  first, second = sub_model("first"), sub_model("second")
  return keras.Model(inputs, keras.layers.Add()([first(inputs),
                                                 second(inputs)]),
                     name="outer"), first, second


@helpers.needs_keras_3
@pytest.mark.parametrize("name", ["head/0", "head/kernel"])
def test_two_layers_of_one_name_are_an_error_not_a_verdict(tmp_path, capsys,
                                                            name):
  model, first, _ = _nested_heads()
  model.save_weights(tmp_path / "before.weights.h5")
  kernel = first.get_layer("head").kernel
  kernel.assign(kernel + 1.0)  # The first head's kernel changes.
  model.save_weights(tmp_path / "after.weights.h5")
  spec = _spec_file(tmp_path, json.dumps({name: {"freeze": "..."}}))
  code, out, err = _main(capsys, "verify", tmp_path / "before.weights.h5",
                         tmp_path / "after.weights.h5", "--spec", spec)
  assert code == 2, out + err
  line = _one_error_line(err)
  assert f"'{name}' could be any of 2 variables" in line, line
  assert "layers/functional/layers/dense/vars/0" in line, line
  assert "layers/functional_1/layers/dense/vars/0" in line, line


@helpers.needs_keras_3
@pytest.mark.parametrize("name, expected", [
    ("first/head/kernel", 1), ("second/head/kernel", 0),
    ("first/head/0", 1), ("layers/functional/layers/dense/vars/0", 1),
    ("outer/second/head/kernel", 0)])
def test_a_longer_name_says_which_layer(tmp_path, capsys, name, expected):
  model, first, _ = _nested_heads()
  model.save_weights(tmp_path / "before.weights.h5")
  kernel = first.get_layer("head").kernel
  kernel.assign(kernel + 1.0)
  model.save_weights(tmp_path / "after.weights.h5")
  spec = _spec_file(tmp_path, json.dumps({name: {"freeze": "..."}}))
  code, out, err = _main(capsys, "verify", tmp_path / "before.weights.h5",
                         tmp_path / "after.weights.h5", "--spec", spec)
  assert code == expected, out + err
  if expected:
    assert f"FAILED: 6 frozen element(s) of '{name}' changed" in out


@helpers.needs_keras_3
def test_a_model_level_weight_in_weights_h5(tmp_path, capsys):
  """A subclassed model's own variable is stored at the file's root."""

  class Scaled(keras.Model):

    def __init__(self, **kwargs):
      super().__init__(**kwargs)
      self.dense = keras.layers.Dense(2)
      self.scale = self.add_weight(shape=(3,), name="scale",
                                   initializer="ones")

    def call(self, x):
      return self.dense(x * self.scale)

  model = Scaled(name="scaled")
  model(np.zeros((1, 3), np.float32))
  spec = tfpartial.freeze(model.scale, 1)
  spec_path = str(tmp_path / "spec.json")
  spec.to_json(spec_path)
  model.save_weights(tmp_path / "before.weights.h5")
  model.scale.assign([5.0, 1.0, 5.0])  # Only trainable elements move.
  model.save_weights(tmp_path / "after.weights.h5")
  args = ["verify", tmp_path / "before.weights.h5",
          tmp_path / "after.weights.h5", "--spec", spec_path]
  code, out, err = _main(capsys, *args)
  assert code == 0, out + err
  assert "scaled/scale" in out and "2/2" in out, out
  model.scale.assign([5.0, 9.0, 5.0])
  model.save_weights(tmp_path / "after.weights.h5")
  code, out, err = _main(capsys, *args)
  assert code == 1, out + err
  assert "FAILED: 1 frozen element(s) of 'scaled/scale' changed, the " \
      "largest by 8" in out


def _damaged(tmp_path, case):
  """(BEFORE, AFTER) where AFTER is damaged in the way `case` names."""
  x = tf.Variable(np.arange(1000, dtype=np.float32))
  before = tf.train.Checkpoint(x=x).write(str(tmp_path / "before" / "ckpt"))
  after = tf.train.Checkpoint(x=x).write(str(tmp_path / "after" / "ckpt"))
  data = next((tmp_path / "after").glob("ckpt.data-*"))
  if case == "missing_data":
    data.unlink()
  elif case == "crc_mismatch":
    damaged = bytearray(data.read_bytes())
    damaged[100] ^= 0xFF
    data.write_bytes(bytes(damaged))
  elif case == "truncated_data":
    data.write_bytes(data.read_bytes()[:50])
  elif case == "garbage_index":
    (tmp_path / "after" / "ckpt.index").write_bytes(b"not a checkpoint")
  elif case == "empty_folder":
    (tmp_path / "empty").mkdir()
    after = tmp_path / "empty"
  elif case == "no_such_file":
    after = tmp_path / "nowhere.weights.h5"
  elif case in ("non_hdf5", "truncated_h5", "h5_without_weights",
                "not_a_zip", "zip_without_weights"):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.save_weights(tmp_path / "good.weights.h5")
    before = tmp_path / "good.weights.h5"
    after = tmp_path / "after.weights.h5"
    if case == "non_hdf5":
      after.write_text("hello")
    elif case == "truncated_h5":
      after.write_bytes(before.read_bytes()[:3000])
    elif case == "h5_without_weights":
      import h5py  # pylint: disable=g-import-not-at-top
      with h5py.File(after, "w") as file:
        file["data"] = np.zeros(3)
    elif case == "not_a_zip":
      after = tmp_path / "after.keras"
      after.write_text("hello")
    else:
      import zipfile  # pylint: disable=g-import-not-at-top
      after = tmp_path / "after.keras"
      with zipfile.ZipFile(after, "w") as archive:
        archive.writestr("config.json", "{}")
  return before, after


@pytest.mark.parametrize("case, message", [
    ("missing_data", r"cannot read 'x' from .*after/ckpt: .*No such file"),
    ("crc_mismatch", r"cannot read 'x' from .*after/ckpt: .*[Cc]hecksum"),
    ("truncated_data", r"cannot read 'x' from .*after/ckpt: "),
    ("garbage_index", r"cannot read the checkpoint .*after/ckpt"),
    ("empty_folder", r"no checkpoint in the folder .*empty"),
    ("no_such_file", r"cannot read .*nowhere.weights.h5: no such file"),
    ("non_hdf5", r"cannot read .*after.weights.h5: not an HDF5 file"),
    ("truncated_h5", r"cannot read .*after.weights.h5"),
    ("h5_without_weights", r"after.weights.h5 holds no Keras weights"),
    ("not_a_zip", r"cannot read .*after.keras: not a \.keras archive"),
    ("zip_without_weights", r"after.keras holds no model.weights.h5"),
])
def test_bad_input_is_exit_2_and_one_line(tmp_path, capsys, case, message):
  keras_files = ("h5" in case or "zip" in case) and case != "no_such_file"
  if keras_files and not helpers.KERAS_3:
    pytest.skip("Keras 3 weight files")
  before, after = _damaged(tmp_path, case)
  name = "dense/kernel" if keras_files else "x"
  spec = _spec_file(tmp_path, json.dumps({name: {"freeze": "0"}}))
  code, out, err = _main(capsys, "verify", before, after, "--spec", spec)
  assert code == 2, out + err
  import re  # pylint: disable=g-import-not-at-top
  assert re.search(message, _one_error_line(err)), err
  assert out == "", out  # No table, no verdict.


def test_every_name_is_found_before_any_read_then_one_variable_at_a_time(
    tmp_path, monkeypatch):
  """docs/guides/verify.md: verify finds and checks every variable the
  spec names before it reads a value, then reads one variable from each
  checkpoint and compares it before it reads the next: it never holds more
  than one variable's two copies."""
  variables = [tf.Variable(np.full((40, 3), i, np.float32), name=f"v{i}")
               for i in range(3)]
  checkpoint = tf.train.Checkpoint(**{v.name[:-2]: v for v in variables})
  before = checkpoint.write(str(tmp_path / "before"))
  after = checkpoint.write(str(tmp_path / "after"))
  spec_path = str(tmp_path / "spec.json")
  spec = tfpartial.freeze(variables[0], 0)
  for variable in variables[1:]:
    spec = spec | tfpartial.freeze(variable, np.s_[:5])
  spec.to_json(spec_path)
  events = []

  class Spy:
    def __init__(self, reader, label):
      self.reader, self.label, self.found = reader, label, {}
      self.layout, self.path, self.file = (reader.layout, reader.path,
                                           reader.file)

    def find(self, name, shape):
      events.append(("find", self.label, name))
      stored = self.reader.find(name, shape)
      self.found[stored.key] = name
      return stored

    def names(self):
      return self.reader.names()

    def unnamed(self):
      return self.reader.unnamed()

    @property
    def saved_format(self):
      return self.reader.saved_format

    def read(self, stored):
      events.append(("read", self.label, self.found[stored.key]))
      return self.reader.read(stored)

    def close(self):
      self.reader.close()

  opened = iter(["before", "after"])
  real_open, real_compare = _verify.open_checkpoint, _verify._compare
  monkeypatch.setattr(_verify, "open_checkpoint",
                      lambda path: Spy(real_open(path), next(opened)))
  monkeypatch.setattr(_verify, "_compare", lambda name, *rest: (
      events.append(("compare", name)), real_compare(name, *rest))[1])
  assert _verify.verify(before, after, spec_path, out=io.StringIO(),
                        progress=io.StringIO()) == 0
  names = ["v0", "v1", "v2"]
  finds = [event for event in events if event[0] == "find"]
  assert events[:len(finds)] == finds and len(finds) == 6
  assert events[len(finds):] == [
      event for name in names
      for event in (("read", "before", name), ("read", "after", name),
                    ("compare", name))]
