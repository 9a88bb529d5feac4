"""Part 28's hand-written lists of `self.` attributes (t38-lists): a step's
list of some of a class's trainable variables leaves out one its model
reads (an aspect table loaded with pretrained vectors); beside each, the
look-alikes that must stay silent."""

import pytest

import scanned

_found = scanned.found

_MEMNET = '''
import tensorflow as tf

class MemN2N(object):
  def __init__(self, sess, pre_trained_target_wt):
    self.sess = sess
    self.pre_trained_target_wt = pre_trained_target_wt

  def build_memory(self):
    self.global_step = tf.Variable(0, name="global_step")
    self.A = tf.Variable(tf.random_uniform([100, 8]))
    self.ASP = tf.Variable(tf.random_uniform([20, 8]))
    self.C = tf.Variable(tf.random_uniform([8, 8]))
    self.ctx = tf.nn.embedding_lookup(self.A, self.context)
    self.asp = tf.nn.embedding_lookup(self.ASP, self.input)
    self.hid = tf.matmul(self.ctx + self.asp, self.C)

  def build_model(self):
    self.build_memory()
    self.W = tf.Variable(tf.random_uniform([8, 3]))
    self.z = tf.matmul(self.hid, self.W)
    self.loss = tf.reduce_sum(self.z)
    self.lr = tf.Variable(self.current_lr)
    self.opt = tf.train.AdagradOptimizer(self.lr)
    params = [self.A, self.C, self.W]
    grads_and_vars = self.opt.compute_gradients(self.loss, params)
    inc = self.global_step.assign_add(1)
    with tf.control_dependencies([inc]):
      self.optim = self.opt.apply_gradients(grads_and_vars)

  def run(self):
    self.sess.run(self.ASP.assign(self.pre_trained_target_wt))
'''

# Every variable the model reads is in the list.
_MEMNET_ALL = _MEMNET.replace(
    "params = [self.A, self.C, self.W]",
    "params = [self.A, self.ASP, self.C, self.W]")

# The table is made untrainable: whole-variable freezing, TF's own.
_MEMNET_UNTRAINABLE = _MEMNET.replace(
    "self.ASP = tf.Variable(tf.random_uniform([20, 8]))",
    "self.ASP = tf.Variable(tf.random_uniform([20, 8]), trainable=False)")

# The only variables left out are a step counter and a learning rate.
_MEMNET_COUNTERS = _MEMNET.replace(
    "params = [self.A, self.C, self.W]",
    "params = [self.A, self.ASP, self.C, self.W]").replace(
        "self.lr = tf.Variable(self.current_lr)",
        "self.lr = tf.Variable(self.current_lr)\n"
        "    self.decay = tf.Variable(self.current_decay)")

_GAN_HALVES = '''
import tensorflow as tf

class GAN(object):
  def build(self, z, x):
    self.G_W = tf.Variable(tf.random_normal([8, 16]))
    self.D_W = tf.Variable(tf.random_normal([16, 1]))
    fake = tf.matmul(z, self.G_W)
    d_fake = tf.matmul(fake, self.D_W)
    d_real = tf.matmul(x, self.D_W)
    d_loss = tf.reduce_mean(d_fake - d_real)
    g_loss = -tf.reduce_mean(d_fake)
    self.d_step = tf.train.AdamOptimizer(1e-4).minimize(
        d_loss, var_list=[self.D_W])
    self.g_step = tf.train.AdamOptimizer(1e-4).minimize(
        g_loss, var_list=[self.G_W])
'''

# Each half's list held in a name first.
_GAN_NAMED = _GAN_HALVES.replace(
    "    self.d_step", "    d_vars = [self.D_W]\n    g_vars = [self.G_W]\n"
    "    self.d_step").replace(
        "var_list=[self.D_W]", "var_list=d_vars").replace(
            "var_list=[self.G_W]", "var_list=g_vars")

# The other half's list kept on the object, read by its step.
_GAN_KEPT = _GAN_HALVES.replace(
    "    self.d_step", "    self.d_vars = [v for v in tf.trainable_variables()"
    " if 'D' in v.name]\n    self.d_step").replace(
        "var_list=[self.D_W]", "var_list=self.d_vars")

_TARGET_NETWORK = '''
import tensorflow as tf

class DQN(object):
  def build(self, s, s2, r):
    self.W = tf.Variable(tf.random_normal([4, 2]))
    self.target_W = tf.Variable(tf.random_normal([4, 2]))
    q = tf.matmul(s, self.W)
    q_next = tf.matmul(s2, self.target_W)
    loss = tf.reduce_mean(tf.square(r + q_next - q))
    self.step = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=[self.W])
    self.sync = self.target_W.assign(self.W)
'''

_EMA = '''
import tensorflow as tf

class Model(object):
  def build(self, x, y):
    self.W = tf.Variable(tf.random_normal([4, 2]))
    self.ema_W = tf.Variable(tf.random_normal([4, 2]))
    self.eval_out = tf.matmul(x, self.ema_W)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, self.W) - y))
    self.step = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=[self.W])
    self.average = self.ema_W.assign(0.99 * self.ema_W + 0.01 * self.W)
'''

_TEACHER = '''
import tensorflow as tf

class Distiller(object):
  def build(self, x):
    self.T = tf.Variable(tf.random_normal([4, 2]))
    self.S = tf.Variable(tf.random_normal([4, 2]))
    soft = tf.stop_gradient(tf.nn.softmax(tf.matmul(x, self.T)))
    logits = tf.matmul(x, self.S)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
        labels=soft, logits=logits))
    self.step = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=[self.S])

  def load_teacher(self, sess, values):
    sess.run(self.T.assign(values))
'''

CASES = [
    pytest.param(_MEMNET, [("var-list-filter", 25)], id="memnet"),
    pytest.param(_MEMNET_ALL, [], id="memnet-all"),
    pytest.param(_MEMNET_UNTRAINABLE, [], id="memnet-untrainable"),
    pytest.param(_MEMNET_COUNTERS, [], id="memnet-counters"),
    pytest.param(_GAN_HALVES, [], id="gan-halves"),
    pytest.param(_GAN_NAMED, [], id="gan-named"),
    pytest.param(_GAN_KEPT, [], id="gan-kept"),
    pytest.param(_TARGET_NETWORK, [], id="target-network"),
    pytest.param(_EMA, [], id="ema"),
    pytest.param(_TEACHER, [], id="teacher"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_self_lists(source, expected):
  assert _found(source) == expected
