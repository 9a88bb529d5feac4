"""`tfpartial scan`, mend 40 (hand lists): programs a reviewer wrote
where a hand-made `var_list` leaves nothing out. A maker told
`trainable=False` only by a dead caller, a same-named method of another
class or a library call, variables made untrainable one level down, an
else arm's list trained by its own step, or a step over everything
(k1-k6); and a dict of variables beside the trained one that is a GAN's
other half trained elsewhere, trained by a step over everything, a
target, an average, optimizer slots, a restored teacher, or rebound to
untrainable variables (d1-d9). None of them is a finding."""

import pytest

import scanned

# A base class whose maker keeps a hand list of what is trainable, and a
# subclass whose step trains that list (k1-k3).
_SALIENCY = """\
import tensorflow as tf

class BasicNet:
  def __init__(self):
    self.trainable_var_collection = []

  def _variable_on_cpu(self, name, shape, trainable=True):
    with tf.device("/cpu:0"):
      var = tf.get_variable(name, shape)
    if trainable:
      self.trainable_var_collection.append(var)
    return var

  def conv_layer(self, name, x, n, trainable=True):
    with tf.variable_scope(name):
      w = self._variable_on_cpu("weights", [3, 3, 8, n], trainable)
      return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

class Saliency(BasicNet):
  def build(self, x, y):
    h = self.conv_layer("conv1", x, 8, trainable=True)
    out = self.conv_layer("head", h, 1, trainable=True)
    self.loss = tf.reduce_mean(tf.square(out - y))
    opt = tf.train.AdamOptimizer(1e-4)
    grads = opt.compute_gradients(self.loss, var_list=self.trainable_var_collection)
    return opt.apply_gradients(grads)
"""

# A class whose maker keeps a hand list (k4-k6); _TWO_LISTS keeps the
# untrainable ones in a second list.
_NET = """\
import tensorflow as tf

class Net:
  def __init__(self):
    self.train_vars = []

  def _var(self, name, shape, trainable=True):
    var = tf.get_variable(name, shape)
    if trainable:
      self.train_vars.append(var)
    return var

"""
_TWO_LISTS = _NET.replace(
    "    self.train_vars = []\n",
    "    self.train_vars = []\n    self.backbone_vars = []\n").replace(
        "      self.train_vars.append(var)\n",
        "      self.train_vars.append(var)\n    else:\n"
        "      self.backbone_vars.append(var)\n")

SILENT = {
    "d1": {
        "gan.py": """\
import tensorflow as tf

def build(z, x):
  g_w = {"g1": tf.Variable(tf.random_normal([4, 8])),
         "g2": tf.Variable(tf.random_normal([8, 4]))}
  d_w = {"d1": tf.Variable(tf.random_normal([4, 8]), name="disc/d1"),
         "d2": tf.Variable(tf.random_normal([8, 1]), name="disc/d2")}
  d_loss, g_loss = gan_losses(z, x, g_w, d_w)
  d_vars = [v for v in tf.trainable_variables() if v.name.startswith("disc")]
  d_step = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
  g_step = tf.train.AdamOptimizer(1e-4).minimize(
      g_loss, var_list=list(g_w.values()))
  return d_step, g_step
""",
    },
    "d2": {
        "model.py": """\
import tensorflow as tf

class GAN:
  def __init__(self, z, x):
    self.G = {"g1": tf.Variable(tf.random_normal([4, 8])),
              "g2": tf.Variable(tf.random_normal([8, 4]))}
    self.D = {"d1": tf.Variable(tf.random_normal([4, 8])),
              "d2": tf.Variable(tf.random_normal([8, 1]))}
    self.d_loss, self.g_loss = self.losses(z, x, self.G, self.D)
    self.g_step = tf.train.AdamOptimizer(1e-4).minimize(
        self.g_loss, var_list=list(self.G.values()))

  def losses(self, z, x, G, D):
    return tf.reduce_sum(G["g1"]) + tf.reduce_sum(D["d1"]), tf.reduce_sum(D["d2"])
""",
        "train.py": """\
import tensorflow as tf
from model import GAN

def main():
  gan = GAN(tf.zeros([1, 4]), tf.zeros([1, 4]))
  d_step = tf.train.AdamOptimizer(1e-4).minimize(
      gan.d_loss, var_list=list(gan.D.values()))
  with tf.Session() as sess:
    for _ in range(10):
      sess.run([d_step, gan.g_step])

if __name__ == "__main__":
  main()
""",
    },
    "d3": {
        "net.py": """\
import tensorflow as tf

def build(x, y):
  weights = {"h1": tf.Variable(tf.random_normal([4, 8])),
             "out": tf.Variable(tf.random_normal([8, 2]))}
  biases = {"h1": tf.Variable(tf.zeros([8])),
            "out": tf.Variable(tf.zeros([2]))}
  logits = mlp(x, weights, biases)
  loss = tf.reduce_mean(tf.square(logits - y))
  warm = tf.train.GradientDescentOptimizer(0.1).minimize(
      loss, var_list=list(weights.values()))
  full = tf.train.AdamOptimizer(1e-3).minimize(
      loss, var_list=tf.trainable_variables())
  return warm, full
""",
    },
    "d4": {
        "dqn.py": """\
import tensorflow as tf
from utils import copy_params

def build(s, a, y):
  online = {"w1": tf.Variable(tf.random_normal([4, 8])),
            "w2": tf.Variable(tf.random_normal([8, 2]))}
  target = {"w1": tf.Variable(tf.random_normal([4, 8])),
            "w2": tf.Variable(tf.random_normal([8, 2]))}
  q = qnet(s, online)
  sync = copy_params(online, target)
  loss = tf.reduce_mean(tf.square(y - q))
  step = tf.train.AdamOptimizer(1e-4).minimize(
      loss, var_list=list(online.values()))
  return step, sync
""",
        "utils.py": """\
def copy_params(src, dst):
  return [dst[k].assign(src[k]) for k in src]
""",
    },
    "d5": {
        "ema_utils.py": """\
def ema_update(params, shadow, decay):
  return [shadow[k].assign(decay * shadow[k] + (1 - decay) * params[k]) for k in params]
""",
        "net.py": """\
import tensorflow as tf
from ema_utils import ema_update

def build(x, y):
  weights = {"h1": tf.Variable(tf.random_normal([4, 8])),
             "out": tf.Variable(tf.random_normal([8, 2]))}
  averages = {"h1": tf.Variable(tf.zeros([4, 8])),
              "out": tf.Variable(tf.zeros([8, 2]))}
  logits = mlp(x, weights)
  loss = tf.reduce_mean(tf.square(logits - y))
  step = tf.train.AdamOptimizer(1e-3).minimize(
      loss, var_list=list(weights.values()))
  with tf.control_dependencies([step]):
    ema_op = ema_update(weights, averages, 0.999)
  return ema_op
""",
    },
    "d6": {
        "gan.py": """\
import tensorflow as tf

class GAN:
  def __init__(self, z, x):
    self.G = {"g1": tf.Variable(tf.random_normal([4, 8])),
              "g2": tf.Variable(tf.random_normal([8, 4]))}
    self.D = {"d1": tf.Variable(tf.random_normal([4, 8])),
              "d2": tf.Variable(tf.random_normal([8, 1]))}
    self.d_loss, self.g_loss = self.losses(z, x, self.G, self.D)
    self.g_step = tf.train.AdamOptimizer(1e-4).minimize(
        self.g_loss, var_list=list(self.G.values()))

  def losses(self, z, x, G, D):
    return tf.reduce_sum(G["g1"]) + tf.reduce_sum(D["d1"]), tf.reduce_sum(D["d2"])
import tensorflow as tf


def main():
  gan = GAN(tf.zeros([1, 4]), tf.zeros([1, 4]))
  d_step = tf.train.AdamOptimizer(1e-4).minimize(
      gan.d_loss, var_list=list(gan.D.values()))
  with tf.Session() as sess:
    for _ in range(10):
      sess.run([d_step, gan.g_step])

if __name__ == "__main__":
  main()
""",
    },
    "d7": {
        "net.py": """\
import numpy as np
import tensorflow as tf

class Net:
  def __init__(self, x, y):
    self.weights = {"w1": tf.Variable(tf.random_normal([4, 8])),
                    "w2": tf.Variable(tf.random_normal([8, 1]))}
    self.biases = {"b1": tf.Variable(tf.zeros([8])),
                   "b2": tf.Variable(tf.zeros([1]))}
    for k in list(self.biases):
      self.biases[k] = tf.Variable(np.zeros(self.biases[k].shape), trainable=False)
    out = self.net(x, self.weights, self.biases)
    loss = tf.reduce_mean(tf.square(out - y))
    self.train_op = tf.train.AdamOptimizer(1e-3).minimize(
        loss, var_list=list(self.weights.values()))
""",
    },
    "d8": {
        "distill.py": """\
import tensorflow as tf

def build(x, y):
  student = {"w1": tf.Variable(tf.random_normal([4, 8])),
             "w2": tf.Variable(tf.random_normal([8, 2]))}
  teacher = {"w1": tf.Variable(tf.random_normal([4, 64])),
             "w2": tf.Variable(tf.random_normal([64, 2]))}
  loss = distill_loss(x, y, student, teacher)
  restore = tf.train.Saver(list(teacher.values()))
  step = tf.train.AdamOptimizer(1e-3).minimize(
      loss, var_list=list(student.values()))
  return step, restore
""",
    },
    "d9": {
        "sgd.py": """\
import tensorflow as tf

def build(x, y):
  weights = {"h1": tf.Variable(tf.random_normal([4, 8])),
             "out": tf.Variable(tf.random_normal([8, 2]))}
  velocity = {"h1": tf.Variable(tf.zeros([4, 8])),
              "out": tf.Variable(tf.zeros([8, 2]))}
  loss = tf.reduce_mean(tf.square(mlp(x, weights) - y))
  grads = tf.gradients(loss, list(weights.values()))
  return momentum_updates(weights, velocity, grads, 0.9)

def momentum_updates(params, slots, grads, mu):
  ops = []
  for (k, p), g in zip(params.items(), grads):
    ops.append(slots[k].assign(mu * slots[k] + g))
    ops.append(p.assign_sub(0.01 * slots[k]))
  return ops
""",
    },
    "k1": {"net.py": _SALIENCY + """\

  def _old_frontend(self, x):
    # kept from an experiment; nothing calls it
    return self.conv_layer("old", x, 8, trainable=False)
"""},
    "k2": {
        "net.py": _SALIENCY,
        "other.py": """\
import tensorflow as tf

class Discriminator:
  def conv_layer(self, name, x, n, trainable=True):
    return tf.layers.conv2d(x, n, 3, name=name, trainable=trainable)

  def build(self, x):
    return self.conv_layer("d1", x, 8, trainable=False)
""",
    },
    "k3": {
        "net.py": _SALIENCY.replace("conv_layer", "conv2d"),
        "probe.py": """\
import tensorflow as tf

def frozen_stem(x):
  return tf.layers.conv2d(x, 8, 3, trainable=False)
""",
    },
    "k4": {"net.py": _TWO_LISTS + """\
  def build(self, x, y):
    w0 = self._var("w0", [4, 8], False)
    w1 = self._var("w1", [8, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.matmul(x, w0), w1) - y))
    opt = tf.train.AdamOptimizer(1e-4)
    head = opt.minimize(loss, var_list=self.train_vars)
    backbone = tf.train.GradientDescentOptimizer(1e-5).minimize(
        loss, var_list=self.backbone_vars)
    return tf.group(head, backbone)
"""},
    "k5": {"net.py": _NET + """\
  def build(self, x, y):
    w0 = self._var("w0", [4, 8], False)
    w1 = self._var("w1", [8, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.matmul(x, w0), w1) - y))
    self.warm = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=self.train_vars)
    self.full = tf.train.AdamOptimizer(1e-5).minimize(loss)
"""},
    "k6": {"net.py": _NET + """\
  def layer(self, name, x, trainable=True):
    if trainable:
      w = self._var(name, [4, 4], trainable)
    else:
      w = tf.get_variable(name, [4, 4], trainable=False)
    return tf.matmul(x, w)

  def build(self, x, y):
    h = self.layer("stem", x, trainable=False)
    out = self.layer("head", h)
    loss = tf.reduce_mean(tf.square(out - y))
    self.op = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=self.train_vars)
"""},
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_nothing_left_out_is_silent(name):
  assert [f for f in scanned.in_project(SILENT[name])
          if f[0] == "var-list-filter"] == []

