"""Hand-made partial freezes the scan missed: two scripts sharing slim's
`_get_variables_to_train` helper in a module of their own, each defining
`--trainable_scopes` with its own default (each script's default is its
own freeze, not the first script's); a model's method, maybe its base
class's, that returns the trainable variables under the scope it is
given, called with a sub-scope of the model's own name while the loss
runs the other sub-network (shown at the call, where the scope is
chosen). Beside them, a script whose flag defaults to None and a GAN's
two sub-scopes, each with its own step, stay silent."""

import scanned

_UTILS = '''
import tensorflow as tf
FLAGS = tf.app.flags.FLAGS

def _get_variables_to_train():
  if FLAGS.trainable_scopes is None:
    return tf.trainable_variables()
  scopes = [scope.strip() for scope in FLAGS.trainable_scopes.split(',')]
  variables_to_train = []
  for scope in scopes:
    variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
    variables_to_train.extend(variables)
  return variables_to_train
'''


def _script(default):
  return f'''
import tensorflow as tf
from utils import _get_variables_to_train
import model_deploy
FLAGS = tf.app.flags.FLAGS

tf.app.flags.DEFINE_string('trainable_scopes', {default}, 'Scopes to train.')


def main(_):
  clones = model_deploy.create_clones(config, clone_fn, [queue])
  optimizer = tf.train.MomentumOptimizer(0.01, 0.9)
  variables_to_train = _get_variables_to_train()
  total_loss, clones_gradients = model_deploy.optimize_clones(
      clones, optimizer, var_list=variables_to_train)
  grad_updates = optimizer.apply_gradients(clones_gradients)
'''


_SCOPES = "'resnet_v1_50/logits, resnet_v1_50/block4/'"


def test_each_script_sharing_the_helper_shows_its_own_default():
  found = scanned.in_project({
      "utils.py": _UTILS, "train_a.py": _script(_SCOPES),
      "train_b.py": _script(_SCOPES)})
  assert ("var-list-filter", "train_a.py", 7) in found
  assert ("var-list-filter", "train_b.py", 7) in found


def test_a_script_whose_default_is_none_is_not_shown_elsewhere():
  found = scanned.in_project({
      "utils.py": _UTILS, "train_a.py": _script(_SCOPES),
      "train_c.py": _script("None")})
  assert ("var-list-filter", "train_a.py", 7) in found
  assert not [f for f in found if f[1] == "train_c.py"]


# A model whose base class returns the trainable variables under the
# scope it is given; the subclass builds two sub-networks under its own
# name and, under a flag, trains only one while the loss runs both.
_BASE = '''
import tensorflow as tf

class Seq2SeqModel(object):
  def __init__(self, args, name):
    self.args = args
    self.name = name
    self.optimizer = tf.train.AdamOptimizer(1e-3)
    self.train_op = self.build_graph()

  def build_graph(self):
    feature, phones, labels = self.build_input()
    loss, gradients = self.build_single_graph(feature, phones, labels)
    return self.optimizer.apply_gradients(gradients)

  def trainable_variables(self, scope=None):
    scope = scope if scope else self.name
    scope += '/'
    variables = tf.get_collection(
        tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope)
    return variables
'''

_SUB = '''
import tensorflow as tf
from base import Seq2SeqModel

class Multi(Seq2SeqModel):
  def __call__(self, feature):
    with tf.variable_scope(self.name):
      with tf.variable_scope('spiker'):
        encoded = tf.layers.dense(feature, 8)
        logits_ctc = tf.layers.dense(encoded, 4)
      with tf.variable_scope('G'):
        logits = tf.layers.dense(encoded * logits_ctc[:, :1], 4)
    return logits_ctc, logits

  def build_single_graph(self, feature, phones, labels):
    logits_ctc, logits = self(feature)
    loss = tf.nn.ctc_loss(phones, logits_ctc, 3) + (
        tf.losses.softmax_cross_entropy(labels, logits))
    with tf.name_scope("gradients"):
      loss = tf.reduce_mean(loss)
      if self.args.fixed:
        gradients = self.optimizer.compute_gradients(loss,
            var_list=self.trainable_variables(self.name + '/G'))
      else:
        gradients = self.optimizer.compute_gradients(loss)
    return loss, gradients
'''


def test_a_base_method_given_a_sub_scope_of_the_model_filters_it():
  assert ("var-list-filter", "sub.py", 23) in scanned.in_project(
      {"base.py": _BASE, "sub.py": _SUB})


_GAN = '''
import tensorflow as tf
from base import Seq2SeqModel

class Gan(Seq2SeqModel):
  def __call__(self, noise, real):
    with tf.variable_scope(self.name):
      with tf.variable_scope('G'):
        fake = tf.layers.dense(noise, 8)
      with tf.variable_scope('D'):
        d_fake = tf.layers.dense(fake, 1)
      with tf.variable_scope('D', reuse=True):
        d_real = tf.layers.dense(real, 1)
    return d_fake, d_real

  def build_single_graph(self, noise, real, _):
    d_fake, d_real = self(noise, real)
    loss_d = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
    loss_g = -tf.reduce_mean(d_fake)
    train_d = self.optimizer.minimize(
        loss_d, var_list=self.trainable_variables(self.name + '/D'))
    train_g = self.optimizer.minimize(
        loss_g, var_list=self.trainable_variables(self.name + '/G'))
    return train_d, train_g
'''


def test_a_gans_two_sub_scopes_each_with_a_step_stay_silent():
  found = scanned.in_project({"base.py": _BASE, "gan.py": _GAN})
  assert not [f for f in found if f[1] == "gan.py"]
