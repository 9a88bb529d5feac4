"""`tfpartial scan --diff` on the End-To-End Memory Network's nil slot: the
gradient of each embedding table goes through a helper that writes zeros
over its first row (`zero_nil_slot`), in a loop over `grads_and_vars`
choosing the tables by name. The port drops the helper's call and freezes
the first row of the same tables; it applies to the file as published,
runs, and holds the nil rows bit for bit.

`scan_real/domluna_memn2n.py.txt` is `memn2n/memn2n.py` of
https://github.com/domluna/memn2n at commit
8a4915ac18e95db3828f3ad862609718c28a17e8 (MIT licence, Copyright (c) 2015
Dominique Luna), copied verbatim (a `.txt` so that nothing collects or
imports it). The test changes one line before it scans: `import tensorflow
as tf` becomes `import tensorflow.compat.v1 as tf` (the file is TF1 code).
The same helper-in-a-loop is copied in many memory networks; the other
real spellings of it (`tf.concat(0, [...])`, a method helper) are checked
below on their own lines.
"""

import pathlib
import subprocess
import tempfile

import pytest

from tests.tools import real_ports
from tfpartial._tools.scan import _diff
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

HERE = pathlib.Path(__file__).parent

# Trains a small network a few steps, from the same seed, with the file as
# it was (`memn2n_original`) and as ported (`memn2n`): the tables before
# and after, their nil rows frozen (compared by `real_ports`).
RUN = '''\
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()


def run(module):
  with tf.Graph().as_default() as graph:
    tf.set_random_seed(1)
    session = tf.Session(graph=graph)
    model = module.MemN2N(4, 12, 5, 6, 8, hops=2, session=session)
    tables = [model.A_1] + model.C
    session.run([t[0].assign(tf.fill([8], 0.25)) for t in tables])
    before = session.run(tables)
    rng = np.random.RandomState(0)
    for _ in range(4):
      stories = rng.randint(0, 12, (4, 6, 5))
      queries = rng.randint(0, 12, (4, 5))
      answers = np.eye(12, dtype=np.int32)[rng.randint(0, 12, 4)]
      model.batch_fit(stories, queries, answers, 0.5)
    after = session.run(tables)
  nil = [np.arange(len(b))[:, None] == 0 for b in before]
  return [(b, a, np.broadcast_to(m, b.shape))
          for b, a, m in zip(before, after, nil)]


import memn2n_original
import memn2n
compare(memn2n_original, memn2n)
'''


# The apply of the file, and the same after a clip by global norm of the
# masked list (as liu-nlper/NER-LSTM-CRF clips it): the port then masks in
# place, so that the clip sees the zeros it saw.
APPLY = ('        train_op = self._opt.apply_gradients(nil_grads_and_vars, '
         'name="train_op")\n')
CLIPPED = ("        grads, variables = zip(*nil_grads_and_vars)\n"
           "        grads, _ = tf.clip_by_global_norm(grads, 0.01)\n"
           "        train_op = self._opt.apply_gradients(zip(grads, "
           "variables), name='train_op')\n")


def _source(apply=APPLY):
  text = (HERE / "scan_real" / "domluna_memn2n.py.txt").read_text()
  assert text.count("import tensorflow as tf\n") == 1
  assert text.count(APPLY) == 1
  return text.replace("import tensorflow as tf\n",
                      "import tensorflow.compat.v1 as tf\n").replace(
                          APPLY, apply)


@pytest.mark.parametrize("apply", [APPLY, CLIPPED],
                         ids=["as-published", "clipped-together"])
def test_the_nil_slot_port_applies_and_holds_the_nil_rows(tmp_path, apply):
  (tmp_path / "memn2n.py").write_text(_source(apply))
  (tmp_path / "memn2n_original.py").write_text(_source(apply))
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "memn2n.py", by_hand=["memn2n.py:38"]))
  ported = (tmp_path / "memn2n.py").read_text()
  assert "zero_nil_slot(g)" not in ported
  if apply == APPLY:
    assert "nil_grads_and_vars.append((g, v))\n            else:" in ported
    assert "spec.apply_gradients(self._opt, nil_grads_and_vars" in ported
  else:
    assert "append((spec.mask([g], [v])[0], v))" in ported, ported
    assert "spec.apply_gradients(self._opt, zip(grads" in ported, ported
  real_ports.run_and_compare(tmp_path, RUN)


# Part ten's copy of the model (asd36952/Memory-Network, code/memn2n.py, a
# Korean memory network vendoring domluna's: no licence, so not copied
# here) takes its optimizer from the constructor, an Adam made in the
# default argument, and sets `self._opt = optimizer` beside the other
# fields: the same MIT file, changed the same way, ports and holds the nil
# rows under Adam's slots.
OPTIMIZER = "        initializer=tf.random_normal_initializer(stddev=0.1),\n"
GRADIENT_DESCENT = ("\n        self._opt = tf.train.GradientDescentOptimizer("
                    "learning_rate=self._lr)\n")


def _adam_source():
  text = _source()
  for old in (OPTIMIZER, GRADIENT_DESCENT, "        self._name = name\n"):
    assert text.count(old) == 1, old
  return text.replace(OPTIMIZER, OPTIMIZER + (
      "        optimizer=tf.train.AdamOptimizer(learning_rate=1e-2),\n")
  ).replace(GRADIENT_DESCENT, "").replace(
      "        self._name = name\n",
      "        self._name = name\n        self._opt = optimizer\n")


def test_the_nil_slot_port_holds_under_an_optimizer_passed_in(tmp_path):
  (tmp_path / "memn2n.py").write_text(_adam_source())
  (tmp_path / "memn2n_original.py").write_text(_adam_source())
  real_ports.apply(tmp_path, real_ports.scan_diff(
      tmp_path, "memn2n.py", by_hand=["memn2n.py:38"]))
  ported = (tmp_path / "memn2n.py").read_text()
  assert "zero_nil_slot(g)" not in ported
  assert "AdamOptimizer(learning_rate=1e-2)" in ported
  assert "spec.apply_gradients(self._opt, nil_grads_and_vars" in ported
  real_ports.run_and_compare(tmp_path, RUN)


# The other spellings of the nil-slot helper in memory networks: TF 0.x's
# `tf.concat(0, [...])` (suriyadeepan/memory-networks), a method of the
# model (jeong-tae/MemN2N), the rows kept as `t[1:]`, and the masked call
# in the `else` branch.
LOOP = '''\
import tensorflow as tf

{helper}

class Model(object):
  def build(self, loss, optimizer, nil_vars):
    grads_and_vars = optimizer.compute_gradients(loss)
    out = []
    for g, v in grads_and_vars:
      if {test}:
        out.append(({masked}, v))
      else:
        out.append(({kept}, v))
    self.train_op = optimizer.apply_gradients(out)
'''
OLD = '''\
def mask_zeros(t):
  s = tf.shape(t)[-1]
  z = tf.zeros(tf.pack([1, s]))
  return tf.concat(0, [z, tf.slice(t, [1, 0], [-1, -1])])
'''
SLICED = '''\
def zero_rows(grad):
  return tf.concat([tf.zeros_like(grad[:2]), grad[2:]], axis=0)
'''


@pytest.mark.parametrize("helper, call, test, frozen", [
    (OLD, "mask_zeros(g)", "v.name in nil_vars", "slice(None, 1)"),
    (SLICED, "zero_rows(g)", "v.name in nil_vars", "slice(None, 2)"),
    (OLD, "mask_zeros(g)", "v.name not in nil_vars", "slice(None, 1)"),
])
def test_the_spellings_of_the_nil_slot_helper_are_ported(
    helper, call, test, frozen):
  else_branch = "not in" in test
  text = LOOP.format(helper=helper, test=test,
                     masked="g" if else_branch else call,
                     kept=call if else_branch else "g")
  findings = _scan.scan_text("m.py", text)
  assert [f.idiom for f in findings] == ["grads-mask"], findings
  assert findings[0].edits, findings[0].by_hand
  data, _ = _diff.diff(findings, {"m.py": _source_of("m.py", text)})
  ported = _apply(text, data.decode())
  compile(ported, "m.py", "exec")
  condition = f"not ({test})" if else_branch else test
  assert (f"[tfpartial.freeze(v, {frozen}) for g, v in grads_and_vars if "
          f"{condition}]") in ported, ported
  # No variable chosen (an empty `nil_vars`) is no error: nothing frozen.
  assert f"{condition}], tfpartial.FreezeSpec())" in ported, ported
  assert call not in ported.split("class Model")[1], ported
  assert "spec.apply_gradients(optimizer, out)" in ported, ported


def test_a_method_helper_is_ported():
  text = '''\
import tensorflow as tf


class Model(object):
  def nil_grad_to_zero(self, grad, name=None):
    with tf.name_scope(name, "zero_grad", [grad]) as scope:
      t = tf.convert_to_tensor(grad, name="t")
      s = tf.shape(t)[1]
      z = tf.zeros(tf.stack([1, s]))
      return tf.concat(axis=0, values=[z, tf.slice(t, [1, 0], [-1, -1])])

  def optimization(self):
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_vars = opt.compute_gradients(self.loss)
    nil_grads_vars = []
    for g, v in grads_vars:
      if v.name in self.nil_vars:
        nil_grads_vars.append((self.nil_grad_to_zero(g), v))
      else:
        nil_grads_vars.append((g, v))
    self.opt = opt.apply_gradients(nil_grads_vars, name="apply_grad")
'''
  findings = _scan.scan_text("m.py", text)
  assert [f.idiom for f in findings] == ["grads-mask"], findings
  assert findings[0].edits, findings[0].by_hand
  data, _ = _diff.diff(findings, {"m.py": _source_of("m.py", text)})
  ported = _apply(text, data.decode())
  compile(ported, "m.py", "exec")
  assert "nil_grads_vars.append((g, v))\n      else:" in ported, ported
  assert ("[tfpartial.freeze(v, slice(None, 1)) for g, v in grads_vars if "
          "v.name in self.nil_vars]") in ported, ported
  assert 'spec.apply_gradients(opt, nil_grads_vars, name="apply_grad")' in (
      ported), ported


def test_a_helper_called_twice_or_outside_a_loop_stays_by_hand():
  text = LOOP.format(helper=OLD, test="v.name in nil_vars",
                     masked="mask_zeros(g)", kept="mask_zeros(g) * 0 + g")
  findings = _scan.scan_text("m.py", text)
  assert findings and not any(f.edits for f in findings), findings


def _source_of(path, text):
  return _files.Source(path, text)


def _apply(text, diff):
  with tempfile.TemporaryDirectory() as folder:
    pathlib.Path(folder, "m.py").write_text(text)
    pathlib.Path(folder, "p.diff").write_text(diff)
    done = subprocess.run(["patch", "-p1", "-s", "-i", "p.diff"], cwd=folder,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr + diff
    return pathlib.Path(folder, "m.py").read_text()


@pytest.mark.parametrize("after", [
    # `clip_by_global_norm` after the mask reads the zeroed rows: the port
    # masks in place with `spec.mask`, so that the clip sees what it saw.
    "    grads, variables = zip(*out)\n"
    "    grads, _ = tf.clip_by_global_norm(grads, 5.0)\n"
    "    self.train_op = optimizer.apply_gradients(zip(grads, variables))\n",
    "    out = [(tf.clip_by_norm(g, 5.0), v) for g, v in out]\n"
    "    self.train_op = optimizer.apply_gradients(out)\n",
    # Two applies (liu-nlper/NER-LSTM-CRF: clipped or not, by a flag).
    "    if self.clip:\n"
    "      grads, variables = zip(*out)\n"
    "      grads, _ = tf.clip_by_global_norm(grads, 5.0)\n"
    "      self.train_op = optimizer.apply_gradients(zip(grads, variables))\n"
    "    else:\n"
    "      self.train_op = optimizer.apply_gradients(out)\n",
])
def test_gradients_changed_after_the_helper_are_masked_in_place(after):
  text = LOOP.format(helper=OLD, test="v.name in nil_vars",
                     masked="mask_zeros(g)", kept="g").replace(
      "    self.train_op = optimizer.apply_gradients(out)\n", after)
  findings = _scan.scan_text("m.py", text)
  assert [f.idiom for f in findings] == ["grads-mask"], findings
  assert findings[0].edits, findings[0].by_hand
  data, _ = _diff.diff(findings, {"m.py": _source_of("m.py", text)})
  ported = _apply(text, data.decode())
  compile(ported, "m.py", "exec")
  assert "out.append((spec.mask([g], [v])[0], v))" in ported, ported
  spec = ported.index("    spec = functools.reduce(")
  assert spec < ported.index("    for g, v in grads_and_vars:"), ported
  assert "optimizer.apply_gradients" not in ported, ported
  assert ported.count("spec.apply_gradients(optimizer, ") == after.count(
      "apply_gradients"), ported


def test_zeros_chosen_per_variable_say_so_when_by_hand():
  # NikolasMarkou/dl_techniques `train_dfsa_ste.py`: whole variables
  # zeroed by a flag each; not a `tf.where`.
  text = '''\
import tensorflow as tf


def step(model, optimizer, x, freeze_mask):
  train_vars = model.trainable_variables
  with tf.GradientTape() as tape:
    loss = model(x)
  grads = tape.gradient(loss, train_vars)
  grads = [tf.zeros_like(g) if frozen else g
           for g, frozen in zip(grads, freeze_mask)]
  optimizer.apply_gradients(zip(grads, train_vars))
'''
  findings = _scan.scan_text("m.py", text)
  assert [f.idiom for f in findings] == ["grads-mask"], findings
  assert not findings[0].edits
  assert "tf.where" not in findings[0].by_hand, findings[0].by_hand
  assert "whole variables" in findings[0].by_hand, findings[0].by_hand
