"""`tfpartial scan --diff` on the memory network's nil slot written as a
lab notebook, the form part forty's heldout40e holds
(cyyeh/2018AI_summer_school, `MeMN2N_Lab.ipynb` at commit
3652c3a891756151d64e426a205e05c9370a038b, an exercise on domluna's
model): the gradient pipeline at a cell's top level, each embedding
table's gradient passed through `zero_nil_slot` in a loop that appends to
`nil_grads_and_vars`, then applied. The port, written into the
notebook's JSON, imports `functools` and `tfpartial` in the cell of
imports, keeps the loop, drops the helper's call and freezes the first
row of the same tables; the diff applies with both tools from the
notebook's folder and from the folder above it (its name holding a
space), and the ported cells run and hold the nil rows bit for bit.

That notebook carries no licence, so it is not copied here (as part
ten's copy in test_scan_real_memn2n is not); the lab leaves its model as
'Your code here' strings, so it cannot run as published either. The
cells here are laid out as the lab lays them out; the helpers are
domluna's (`scan_real/domluna_memn2n.py.txt`, MIT), the pipeline cell's
statements are those of domluna's `MemN2N.__init__` at a cell's top
level, as the lab writes them, and the model is a small stand-in for the
lab's blanks.
"""

import json
import pathlib

from tests.tools import real_ports

HERE = pathlib.Path(__file__).parent
FOLDER = "lab 40e"

IMPORTS = '''\
import tensorflow.compat.v1 as tf
import numpy as np
import os

tf.disable_eager_execution()


class Parameter(object):
    max_grad_norm = 40.0
    hops = 3
    name = 'MemN2N'

param = Parameter()
'''
# The lab's blanks ('Your code here'), filled with a small bag-of-words
# model over three hops' tables.
MODEL = '''\
tf.set_random_seed(1)
_stories = tf.placeholder(tf.int32, [None, 6, 5], name="stories")
_queries = tf.placeholder(tf.int32, [None, 5], name="queries")
_answers = tf.placeholder(tf.int32, [None, 12], name="answers")
_lr = tf.placeholder(tf.float32, [], name="learning_rate")
initializer = tf.random_normal_initializer(stddev=0.1)
with tf.variable_scope(param.name):
    A_1 = tf.Variable(initializer([12, 8]), name="A")
    C = []
    for hopn in range(param.hops):
        with tf.variable_scope('hop_{}'.format(hopn)):
            C.append(tf.Variable(initializer([12, 8]), name="C"))
    W = tf.Variable(initializer([8, 12]), name="W")
_nil_vars = set([A_1.name] + [x.name for x in C])
u = tf.reduce_sum(tf.nn.embedding_lookup(A_1, _queries), 1)
for c in C:
    m = tf.reduce_sum(tf.nn.embedding_lookup(c, _stories), [1, 2])
    u = u + tf.nn.tanh(m * u)
logits = tf.matmul(u, W)
'''
PIPELINE = '''
# optimizer
opt = tf.train.GradientDescentOptimizer(learning_rate=_lr)
# cross entropy
cross_entropy = tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, \
labels=tf.cast(_answers, tf.float32), name="cross_entropy")
# loss
loss = tf.reduce_sum(cross_entropy, name="cross_entropy_sum")
# gradient pipeline
grads_and_vars = opt.compute_gradients(loss)
grads_and_vars = [(tf.clip_by_norm(g, param.max_grad_norm) if g is not \
None else g, v) for g,v in grads_and_vars]
grads_and_vars = [(add_gradient_noise(g) if g is not None else g, v) for \
g,v in grads_and_vars]
nil_grads_and_vars = []
for g, v in grads_and_vars:
    if v.name in _nil_vars:
        nil_grads_and_vars.append((zero_nil_slot(g), v))
    else:
        nil_grads_and_vars.append((g, v))
train_op = opt.apply_gradients(nil_grads_and_vars, name="train_op")

predict_op = tf.argmax(logits, 1, name="predict_op")
'''

# Runs the cells, the notebook as it was and as ported, each in a graph of
# its own from the same seed, 4 steps of made-up stories: the four tables
# before and after, their nil rows frozen (compared by `real_ports`).
RUN = '''\
import json

import numpy as np
import tensorflow.compat.v1 as tf


def run(path):
  cells = json.load(open(path, encoding="utf-8"))["cells"]
  code = "\\n".join("".join(c["source"]) for c in cells
                    if not "".join(c["source"]).startswith("!"))
  with tf.Graph().as_default():
    cell = {}
    exec(compile(code, path, "exec"), cell)
    tables = [cell["A_1"]] + cell["C"]
    rng = np.random.RandomState(0)
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      session.run([t[0].assign(tf.fill([8], 0.25)) for t in tables])
      before = session.run(tables)
      for _ in range(4):
        session.run(cell["train_op"], {
            cell["_stories"]: rng.randint(0, 12, (4, 6, 5)),
            cell["_queries"]: rng.randint(0, 12, (4, 5)),
            cell["_answers"]: np.eye(12, dtype=np.int32)[
                rng.randint(0, 12, 4)],
            cell["_lr"]: 0.5})
      after = session.run(tables)
  nil = [np.arange(len(b))[:, None] == 0 for b in before]
  return [(b, a, np.broadcast_to(m, b.shape))
          for b, a, m in zip(before, after, nil)]


compare("original.ipynb", "lab 40e/MeMN2N_Lab.ipynb")
'''


def _helpers():
  """domluna's `zero_nil_slot` and `add_gradient_noise`, as published."""
  text = (HERE / "scan_real" / "domluna_memn2n.py.txt").read_text()
  start = text.index("def zero_nil_slot(")
  return text[start:text.index("class MemN2N(")].rstrip("\n") + "\n"


def _notebook():
  cells = ["!wget http://www.thespermwhale.com/jaseweston/babi/"
           "tasks_1-20_v1-2.tar.gz\n", IMPORTS, MODEL,
           _helpers() + PIPELINE]
  return json.dumps({
      "cells": [{"cell_type": "code", "execution_count": None,
                 "metadata": {}, "outputs": [],
                 "source": cell.rstrip("\n").splitlines(True)}
                for cell in cells],
      "metadata": {"kernelspec": {"name": "python3",
                                  "display_name": "Python 3"}},
      "nbformat": 4, "nbformat_minor": 0}, indent=2) + "\n"


def test_the_lab_notebook_port_applies_from_both_folders_and_holds(
    tmp_path):
  folder = tmp_path / FOLDER
  folder.mkdir()
  (folder / "MeMN2N_Lab.ipynb").write_text(_notebook())
  (tmp_path / "original.ipynb").write_text(_notebook())
  inside = real_ports.scan_diff(folder, "MeMN2N_Lab.ipynb",
                                by_hand=["MeMN2N_Lab.ipynb"])
  above = real_ports.scan_diff(tmp_path, FOLDER, by_hand=["MeMN2N_Lab"])
  assert "+++ b/lab 40e/MeMN2N_Lab.ipynb\t\n" in above, above
  real_ports.apply(folder, inside)
  (folder / "MeMN2N_Lab.ipynb").write_text(_notebook())
  real_ports.apply(tmp_path, above)
  cells = json.loads((folder / "MeMN2N_Lab.ipynb").read_text())["cells"]
  imports, pipeline = ("".join(cells[i]["source"]) for i in (1, 3))
  assert "import functools\nimport tfpartial\n" in imports, imports
  assert "zero_nil_slot(g)" not in pipeline, pipeline
  assert "tfpartial.freeze(v, slice(None, 1))" in pipeline, pipeline
  assert "spec.apply_gradients(opt, nil_grads_and_vars" in pipeline
  real_ports.run_and_compare(tmp_path, RUN)
