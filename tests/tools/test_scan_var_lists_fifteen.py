"""`tfpartial scan`'s `var-list-filter` on lists that leave variables
out in ways part fifteen's real code showed: a step's list of one
model's variables that a flag grows by another model's, the other model
run in the step's forward pass (with the flag off a pretrained embedder
stays fixed); slices of one list trained by two steps that leave its
head out."""

import pytest

from tests.tools import scanned

_found = scanned.found

_LOCAL = """
import tensorflow as tf
class BC(object):
  def __init__(self, embed_model, finetune=False):
    self.embed_model = embed_model
    self.finetune = finetune
    self.policy = Policy()
    self.optimizer = tf.keras.optimizers.Adam()

  def update_step(self, states, actions):
    trainable_variables = self.policy.trainable_variables
    if self.embed_model and self.finetune:
      trainable_variables += self.embed_model.trainable_variables
    with tf.GradientTape(watch_accessed_variables=False) as tape:
      tape.watch(trainable_variables)
      states = self.embed_model(states, stop_gradient=not self.finetune)
      loss = tf.reduce_mean(self.policy(states) - actions)
    grads = tape.gradient(loss, trainable_variables)
    self.optimizer.apply_gradients(zip(grads, trainable_variables))
"""

_ATTRIBUTE = """
import tensorflow as tf
class Latent(object):
  def __init__(self, embed_model, finetune=False):
    self.policy = Policy()
    self.embed_model = embed_model
    self.finetune = finetune
    self.trainable_variables = self.policy.trainable_variables
    if self.finetune:
      self.trainable_variables += self.embed_model.embedder.variables
    self.optimizer = tf.keras.optimizers.Adam()

  def update_step(self, states, actions):
    with tf.GradientTape(watch_accessed_variables=False) as tape:
      tape.watch(self.trainable_variables)
      embed = self.embed_model(states, actions)
      loss = tf.reduce_mean(self.policy(states) - embed)
    grads = tape.gradient(loss, self.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
"""

_FUNCTION = """
import tensorflow as tf
def train_step(args, head, backbone, images, labels, optimizer):
  var_list = head.trainable_weights
  if args.fine_tune_backbone:
    var_list = var_list + backbone.trainable_weights
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(head(backbone(images)) - labels)
  optimizer.apply_gradients(zip(tape.gradient(loss, var_list), var_list))
"""


@pytest.mark.parametrize("code, expected", [
    (_LOCAL, [("var-list-filter", 11)]),
    (_ATTRIBUTE, [("var-list-filter", 8)]),
    (_FUNCTION, [("var-list-filter", 4)]),
], ids=["local", "attribute", "function"])
def test_a_model_added_only_under_a_flag_is_left_out(code, expected):
  assert _found(code) == expected


# The added model is not run in the step (a regulariser's variable, a
# model the step never calls), or is added unconditionally.
_NOT_RUN = _FUNCTION.replace("head(backbone(images))", "head(images)")
_ALWAYS = """
import tensorflow as tf
def train_step(head, backbone, images, labels, optimizer):
  var_list = head.trainable_weights
  var_list = var_list + backbone.trainable_weights
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(head(backbone(images)) - labels)
  optimizer.apply_gradients(zip(tape.gradient(loss, var_list), var_list))
"""
_SCALAR = """
import tensorflow as tf
class Agent(object):
  def update_step(self, states, actions):
    trainable_variables = self.policy.trainable_variables
    if self.kl_regularizer:
      trainable_variables += [self.log_alpha]
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(self.policy(states) - actions)
    grads = tape.gradient(loss, trainable_variables)
    self.optimizer.apply_gradients(zip(grads, trainable_variables))
"""


@pytest.mark.parametrize("code", [_NOT_RUN, _ALWAYS, _SCALAR],
                         ids=["not-run", "always", "scalar"])
def test_a_list_grown_otherwise_is_silent(code):
  assert _found(code) == []


# Slices of one list trained by the steps of one function.
_SLICES = """
import tensorflow as tf
def build(loss, lr):
  optim = tf.train.AdamOptimizer(lr * 0.1).minimize(
      loss, var_list=tf.trainable_variables()[%s])
  optim2 = tf.train.AdamOptimizer(lr).minimize(
      loss, var_list=tf.trainable_variables()[%s])
  return optim, optim2
"""


@pytest.mark.parametrize("first, second, expected", [
    ("2:-2", "-2:", [("var-list-filter", 5)]),
    ("2:5", "5:", [("var-list-filter", 5)]),
    (":-2", "-2:", []),
    (":2", "2:", []),
], ids=["head-left-out", "head-left-out-positive", "meet-at-end",
        "meet-at-start"])
def test_slices_of_one_list_that_leave_its_head_out(first, second, expected):
  assert _found(_SLICES % (first, second)) == expected


# A scope opened around some layers, other layers built beside it
# outside any scope in the same function.
_BESIDE = """
import tensorflow as tf
from tensorflow.contrib import training as contrib_training
def score(x, y, n, hparams):
  with tf.Graph().as_default():
    with tf.variable_scope('attention'):
      attention = tf.layers.dense(x, n, use_bias=False)
    layer = tf.layers.dense(tf.nn.softmax(attention), 16)
    %s
    loss = tf.losses.sigmoid_cross_entropy(y, logits)
    vars_to_train = tf.get_collection(
        tf.GraphKeys.TRAINABLE_VARIABLES, scope='attention')
    return contrib_training.create_train_op(
        loss, tf.train.AdamOptimizer(hparams.learning_rate),
        variables_to_train=vars_to_train)
"""


@pytest.mark.parametrize("rest, expected", [
    ("logits = tf.layers.dense(layer, n)", [("var-list-filter", 11)]),
    ("with tf.variable_scope('attention'):\n"
     "      logits = tf.layers.dense(layer, n)", []),
], ids=["layers-beside", "all-under-scopes"])
def test_layers_built_beside_a_kept_scope_are_left_out(rest, expected):
  code = _BESIDE % rest
  if not expected:  # Every layer under the kept scope: the whole model.
    code = code.replace(
        "    layer = tf.layers.dense(tf.nn.softmax(attention), 16)\n", "")
    code = code.replace("dense(layer, n)", "dense(attention, n)")
  assert _found(code) == expected


# A GAN's generator step whose loss a flag trains on one more list.
_GAN = """
import tensorflow as tf
def model_fn(opts, loss_d, loss_g):
  def get_optimizer(lr, loss, var_list):
    return tf.train.AdamOptimizer(lr).minimize(loss, var_list=var_list)
  d_vars = [v for v in tf.trainable_variables() if v.name.startswith('d_')]
  g_vars = [v for v in tf.trainable_variables() if v.name.startswith('g_')]
  train_d = [get_optimizer(opts.d_lr, loss_d, d_vars)]
  train_g = [get_optimizer(opts.g_lr, loss_g, g_vars)]
  if opts.train_encoder:
    enc_vars = [v for v in tf.trainable_variables()
                if v.name.startswith('encoder')]
    train_g.append(get_optimizer(opts.g_lr, loss_g, %s))
  return train_d + train_g
"""


@pytest.mark.parametrize("extra, expected", [
    ("enc_vars", [("var-list-filter", 7)]),
    ("g_vars", []),
], ids=["flag-adds-a-list", "flag-repeats-a-list"])
def test_a_list_a_flag_adds_to_a_gan_s_loss(extra, expected):
  assert _found(_GAN % extra) == expected


def test_a_gan_without_a_flag_s_list_is_silent():
  code = (_GAN % "enc_vars").replace("opts.train_encoder", "True")
  assert _found(code.replace("  if True:\n", "  if len(loss_g.shape):\n")
                ) == []
