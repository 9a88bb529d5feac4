"""`tfpartial scan --diff` on a real file: the port applies to it as
published and runs, holding the frozen elements bit for bit.

`scan_real/growneuron_growers.py.txt` is `growneuron/growers.py` of
https://github.com/google-research/growneuron at commit
c1f3d1ff366d794d06d3c77a6ac92e8eccfd90c3 (Apache 2.0), copied verbatim (a
`.txt` so that nothing collects or imports it). Its two optimisers of new
neurons (`AddFirefly`, `AddGradmaxOptim`) zero the gradient of the old
neurons with `tf.concat([tf.zeros_like(old), new])`; the port freezes the
old neurons' slice of each weight instead. Its imports that a small run
does not need (`growneuron.layers`, SciPy's `arpack`) are stubbed.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}

LAYERS = '''\
import tensorflow as tf


class GrowLayer:
  pass


def norm_l2(x, keep_dim):
  axes = [a for a in range(len(x.shape)) if a != keep_dim % len(x.shape)]
  return tf.sqrt(tf.reduce_sum(tf.square(x), axis=axes)).numpy()


def normalize_l2(x, axis):
  return x / (tf.norm(x, axis=axis, keepdims=True) + 1e-8)
'''

# Two small layers whose weights grow by one neuron (as growneuron's layers
# do: a new, wider variable), each grower optimised for a few steps; prints
# whether the old neurons' weights held, bit for bit, and whether the new
# ones trained.
RUN = '''\
import numpy as np
import tensorflow as tf
from growneuron import growers


class Layer:
  def __init__(self, shape, seed):
    self.weights = [tf.Variable(
        tf.random.stateless_normal(shape, (seed, 0)), name=f"w{seed}")]

  def add_neurons(self, n_new, is_outgoing, **kwargs):
    old = self.weights[0].numpy()
    axis = 0 if is_outgoing else 1
    shape = list(old.shape)
    shape[axis] = n_new
    new = np.full(shape, 0.5, np.float32)
    self.weights[0] = tf.Variable(np.concatenate([old, new], axis=axis))


def run(grower_class, frozen):
  first, second = Layer([3, 4], 1), Layer([4, 2], 2)
  grower = grower_class()
  grower.strategy = tf.distribute.get_strategy()
  grower.compile_fn = lambda: None
  grower.optim_n_step = 10
  grower.optim_fn = lambda: tf.keras.optimizers.Adam(0.1)
  grower.loss_fn = lambda inputs: tf.reduce_sum(tf.square(tf.matmul(
      tf.matmul(inputs, first.weights[0]), second.weights[0])))
  before = [first.weights[0].numpy(), second.weights[0].numpy()]
  grower.grow_neurons([first, second], tf.ones([2, 3]), n_new=1)
  after = [first.weights[0].numpy(), second.weights[0].numpy()]
  held = all(np.array_equal(after[i][frozen[i]].view(np.uint32),
                            before[i].view(np.uint32))
             for i in range(2) if frozen[i] is not None)
  trained = any(not np.array_equal(after[i][..., -1:] if i == 0 else
                                   after[i][-1:], 0.5) for i in range(2))
  print(grower_class.__name__, "held:", held, "trained:", trained)


run(growers.AddFirefly, [np.s_[:, :4], np.s_[:4, :]])
run(growers.AddGradmaxOptim, [None, np.s_[:4, :]])
'''


def _write_project(folder):
  package = folder / "growneuron"
  package.mkdir()
  (package / "__init__.py").write_text("")
  (package / "layers.py").write_text(LAYERS)
  shutil.copy(HERE / "scan_real" / "growneuron_growers.py.txt",
              package / "growers.py")
  eigen = folder / "scipy" / "sparse" / "linalg" / "eigen"
  eigen.mkdir(parents=True)
  for part in (folder / "scipy", eigen.parent.parent, eigen.parent):
    (part / "__init__.py").write_text("")
  (eigen / "__init__.py").write_text("arpack = None\n")
  (folder / "run.py").write_text(RUN)


def _run(args, folder, timeout):
  return subprocess.run(args, cwd=folder, capture_output=True, text=True,
                        timeout=timeout, check=False, env=ENV)


def test_the_port_of_a_real_file_applies_and_holds_the_old_neurons(
    tmp_path):
  if shutil.which("git") is None:
    pytest.fail("git is needed to test that the diff applies")
  _write_project(tmp_path)
  diff = _run([sys.executable, "-m", "tfpartial", "scan", "--diff",
               "growneuron"], tmp_path, timeout=60)
  assert diff.returncode == 1, diff.stderr
  assert "growers.py:115" not in diff.stderr and (
      "growers.py:188" not in diff.stderr), diff.stderr  # Not by hand.
  assert diff.stdout.count("+import tfpartial") == 1, diff.stdout
  (tmp_path / "port.diff").write_text(diff.stdout)
  applied = _run(["git", "apply", "port.diff"], tmp_path, timeout=60)
  assert applied.returncode == 0, applied.stderr
  ported = (tmp_path / "growneuron" / "growers.py").read_text()
  assert "tf.zeros_like(old_wgrad)" not in ported
  assert "spec.apply_gradients(optimizer," in ported
  result = _run([sys.executable, "run.py"], tmp_path, timeout=300)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.splitlines() == [
      "AddFirefly held: True trained: True",
      "AddGradmaxOptim held: True trained: True"], result.stdout
