"""`tfpartial scan`'s cost in the number of training steps of a project:
checks that asked a question of every module of the project (or of the
whole module, or of the whole class) again for each step now read each
module once per analysis and answer each step from that index. Each
project below holds `n` steps; four times as many must cost
at most 4.5 times the calls in the module named (before: x4.6 to x16;
linear work grows x4), the whole scan of one module of steps at most
five times (before: x7.8).
Synthetic projects, each a shape of real training code."""

import pytest

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _work(project, n, where):
  """The calls `where`'s code makes in a scan of `project(n)`."""
  sources = [_files.Source(path, text) for path, text in project(n).items()]
  return scanned.calls_made(lambda: _scan.scan_project(sources), where)


def _linear(project, where, n=10):
  """(calls at `n`, at `4 n`) in `where`, the findings the same per step."""
  (small, (few, _)), (large, (many, _)) = (
      _work(project, k, where) for k in (n, 4 * n))
  assert len(many) == 4 * len(few), (len(few), len(many))
  return small, large


def _heads_beside_backbones(n):
  """`n` model files, each building a backbone of the project in one
  scope and a head on its output in a sibling scope, and `n` scripts
  each training only its model's head: the backbones stay fixed."""
  files = {"backbone.py": (
      "import numpy as np\nimport tensorflow as tf\n\n"
      "class Darknet:\n"
      "  def __init__(self, path):\n    self.data = np.load(path)\n\n"
      "  def build(self, x):\n"
      "    w = tf.Variable(self.data['conv0'], name='w')\n"
      "    self.route = tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME')\n"
      "    return self.route\n")}
  for i in range(n):
    files[f"model{i}.py"] = (
        "import tensorflow as tf\nfrom backbone import Darknet\n\n"
        f"class Detector{i}:\n"
        "  def __init__(self, images):\n"
        f"    with tf.variable_scope('Extractor{i}'):\n"
        "      extractor = Darknet('darknet.npz')\n"
        "      self.feats = extractor.build(images)\n"
        f"    with tf.variable_scope('Head{i}'):\n"
        "      self.out = tf.layers.conv2d(extractor.route, 255, 1)\n")
    files[f"train{i}.py"] = (
        f"import tensorflow as tf\nfrom model{i} import Detector{i}\n\n"
        f"model = Detector{i}(images)\n"
        "loss = tf.reduce_mean(model.out)\n"
        "head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "
        f"scope='Head{i}')\n"
        "op = tf.train.AdamOptimizer().minimize(loss, var_list=head)\n")
  return files


def _warm_started_heads(n):
  """`n` model files, each warm-starting its backbone's scope from a
  checkpoint, and `n` scripts each training only its model's head."""
  files = {}
  for i in range(n):
    files[f"model{i}.py"] = (
        "import tensorflow as tf\n\ndef build(x):\n"
        f"  with tf.variable_scope('resnet{i}'):\n"
        "    h = tf.layers.dense(x, 4)\n"
        f"  with tf.variable_scope('bias_opt{i}'):\n"
        "    return tf.layers.dense(h, 4)\n\n"
        f"tf.train.init_from_checkpoint('ckpt', {{'resnet{i}/': "
        f"'resnet{i}/'}})\n")
    files[f"train{i}.py"] = (
        f"import tensorflow as tf\nfrom model{i} import build\n\n"
        "y = build(x)\n"
        "vs = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "
        f"scope='bias_opt{i}')\n"
        "op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(\n"
        "    tf.reduce_sum(y), var_list=vs)\n")
  return files


def _flag_chosen_scopes(n):
  """`n` scripts, each training the scopes a flag names, its default
  the script's head."""
  return {f"train{i}.py": (
      "import argparse\nimport tensorflow as tf\n\n"
      "parser = argparse.ArgumentParser()\n"
      f"parser.add_argument('--trainable_scopes{i}', default='Logits{i}')\n"
      "FLAGS = parser.parse_args()\n"
      f"with tf.variable_scope('Net{i}'):\n  y = tf.layers.dense(x, 4)\n"
      f"with tf.variable_scope('Logits{i}'):\n  z = tf.layers.dense(y, 4)\n"
      f"scopes = [s.strip() for s in FLAGS.trainable_scopes{i}.split(',')]\n"
      "var_list = []\nfor s in scopes:\n"
      "  var_list += tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, s)\n"
      "op = tf.train.AdamOptimizer().minimize(tf.reduce_sum(z), "
      "var_list=var_list)\n") for i in range(n)}


def _remasking_callbacks(n):
  """`n` scripts, each fitting a model with a callback that re-masks
  its first kernel after every batch."""
  return {f"remask{i}.py": (
      "import tensorflow as tf\n\n"
      f"class Remask{i}(tf.keras.callbacks.Callback):\n"
      "  def __init__(self, mask):\n    self.mask = mask\n\n"
      "  def on_batch_end(self, batch, logs=None):\n"
      "    w = self.model.layers[0].kernel\n"
      "    w.assign(w * self.mask)\n\n"
      f"model{i} = tf.keras.Sequential([tf.keras.layers.Dense(4)])\n"
      f"model{i}.compile('adam', 'mse')\n"
      f"model{i}.fit(x, y, callbacks=[Remask{i}(mask)])\n")
      for i in range(n)}


def _scoped_steps_in_one_module(n):
  """One module of `n` functions, each building a body and a head in
  scopes of their own and training only the head."""
  return {"big.py": "import tensorflow as tf\n" + "".join(
      f"\ndef train{i}(x):\n"
      f"  with tf.variable_scope('body{i}'):\n"
      "    h = tf.layers.dense(x, 4)\n"
      f"  with tf.variable_scope('head{i}'):\n"
      "    y = tf.layers.dense(h, 4)\n"
      "  vs = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "
      f"scope='head{i}')\n"
      "  return tf.train.AdamOptimizer().minimize(tf.reduce_sum(y), "
      "var_list=vs)\n" for i in range(n))}


@pytest.mark.parametrize("project, where, n", [
    (_heads_beside_backbones, "_built_outside.py", 10),
    (_heads_beside_backbones, "_warm_started.py", 10),
    (_heads_beside_backbones, "_flagged.py", 10),
    (_heads_beside_backbones, "_model_named.py", 10),
    (_warm_started_heads, "_warm_started.py", 10),
    (_flag_chosen_scopes, "_flagged.py", 20),
    (_remasking_callbacks, "_mask_kept.py", 10),
    (_scoped_steps_in_one_module, "_layers_beside.py", 10),
    (_scoped_steps_in_one_module, "_frozen_backbone.py", 10),
])
def test_each_step_reads_an_index_not_every_module(project, where, n):
  # Linear work grows x4 here; a walk per step of every module grew
  # x4.4 to x16 (x4.6 and x4.7 where few modules were read).
  small, large = _linear(project, where, n)
  assert large <= 4.5 * small, (small, large)


def test_a_module_of_four_times_the_steps_costs_at_most_five_times():
  small, large = _linear(_scoped_steps_in_one_module, "")
  assert large <= 5 * small, (small, large)
