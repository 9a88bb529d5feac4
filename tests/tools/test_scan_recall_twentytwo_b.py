"""Hand-made partial freezes of TF1 and Estimator code that the scan
missed: a comprehension whose inner loop over names keeps the variables
whose name holds one of them (a BERT-style `create_optimizer` handed the
names to train), and a hand-written list of a class's variables, read
from its attributes or the tables of its layers, trained beside a step
of the same loss over every variable (a warm-up of the new layers on
restored ones). Beside them, the same shapes where nothing is left out
stay silent: a GAN's two lists at their own steps, an autoencoder's two
halves trained by two steps, a list naming every variable the class
makes, a Saver's list."""

import scanned

# A BERT-style optimizer: trains only the variables whose name holds one
# of the names it is handed.
_OPTIMIZATION = '''
import tensorflow as tf

def create_optimizer(loss, init_lr, train_vars_list):
  optimizer = tf.train.AdamOptimizer(init_lr)
  tvars = tf.trainable_variables()
  if train_vars_list:
    tvars = [v for v in tvars for tvar in train_vars_list if tvar in v.name]
  grads = tf.gradients(loss, tvars)
  (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
  return optimizer.apply_gradients(zip(grads, tvars))
'''

_RUN = '''
import tensorflow as tf
import optimization

def model_fn(features, labels, mode, params):
  total_loss = build(features, labels)
  train_vars_list = None
  if FLAGS.freeze_vars:
    train_vars_list = ['action_recognition']
  train_op = optimization.create_optimizer(
      total_loss, 1e-4, train_vars_list)
  return tf.estimator.EstimatorSpec(mode, loss=total_loss, train_op=train_op)
'''


def test_an_inner_loop_over_names_filters_the_variables():
  assert ("var-list-filter", "optimization.py", 8) in scanned.in_project(
      {"optimization.py": _OPTIMIZATION, "run.py": _RUN})


def test_an_inner_loop_over_literal_names_filters_the_variables():
  assert scanned.found('''
      import tensorflow as tf

      def train(loss):
        names = ["head", "classifier"]
        tvars = [v for v in tf.trainable_variables()
                 for n in names if n in v.name]
        return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=tvars)
      ''') == [("var-list-filter", 6)]


def test_an_inner_loop_that_is_not_a_name_test_stays_silent():
  assert scanned.found('''
      import tensorflow as tf

      def train(loss, groups):
        tvars = [v for group in groups for v in group if v is not None]
        return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=tvars)
      ''') == []


# A multimodal autoencoder: the variables of each layer in a table held by
# an attribute; the shared layers trained first on the restored ones.
_MAE = '''
import tensorflow as tf

class MAE(object):

  def model(self, x):
    self.enc_layer = {
        'weights': tf.Variable(tf.random_normal([10, 5]), name='enc_w'),
        'bias': tf.Variable(tf.zeros([5]), name='enc_b')}
    h = tf.nn.relu(tf.matmul(x, self.enc_layer['weights'])
                   + self.enc_layer['bias'])
    self.full_ec_layer = {
        'weights': tf.Variable(tf.random_normal([5, 3]), name='full_ec_w'),
        'bias': tf.Variable(tf.zeros([3]), name='full_ec_b')}
    code = tf.matmul(h, self.full_ec_layer['weights']) + (
        self.full_ec_layer['bias'])
    self.full_dc_layer = {
        'weights': tf.Variable(tf.random_normal([3, 10]), name='full_dc_w'),
        'bias': tf.Variable(tf.zeros([10]), name='full_dc_b')}
    return tf.matmul(code, self.full_dc_layer['weights']) + (
        self.full_dc_layer['bias'])

  def train(self, data, epochs):
    x = tf.placeholder(tf.float32, [None, 10])
    cost = tf.reduce_mean(tf.square(self.model(x) - x))
    optimizer1 = tf.train.AdamOptimizer(1e-3).minimize(cost, var_list=[
        LISTED])
    optimizer2 = tf.train.AdamOptimizer(1e-3).minimize(cost)
    load = tf.train.Saver({'enc_w': self.enc_layer['weights'],
                           'enc_b': self.enc_layer['bias']})
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      load.restore(sess, 'pretrained.ckpt')
      for epoch in range(epochs):
        if epoch < 20:
          sess.run(optimizer1, feed_dict={x: data})
        else:
          sess.run(optimizer2, feed_dict={x: data})
'''

_SHARED = ("self.full_ec_layer['weights'], self.full_ec_layer['bias'], "
           "self.full_dc_layer['weights'], self.full_dc_layer['bias']")


def test_a_hand_written_list_of_layer_tables_beside_the_whole_loss():
  assert scanned.found(_MAE.replace("LISTED", _SHARED)) == [
      ("var-list-filter", 26)]


def test_a_hand_written_list_of_attributes_beside_the_whole_loss():
  assert scanned.found('''
      import tensorflow as tf

      class Net(object):

        def build(self, x):
          self.w1 = tf.Variable(tf.zeros([4, 4]))
          self.w2 = tf.Variable(tf.zeros([4, 1]))
          return tf.matmul(tf.matmul(x, self.w1), self.w2)

        def train(self, x, y):
          cost = tf.reduce_mean(tf.square(self.build(x) - y))
          warm = tf.train.AdamOptimizer(1e-3).minimize(cost, var_list=[
              self.w2])
          full = tf.train.AdamOptimizer(1e-3).minimize(cost)
          return warm, full
      ''') == [("var-list-filter", 13)]


def test_a_hand_written_list_of_every_variable_the_class_makes():
  every = ("self.enc_layer['weights'], self.enc_layer['bias'], " + _SHARED)
  assert scanned.found(_MAE.replace("LISTED", every)) == []


def test_a_gans_two_hand_written_lists_at_their_own_steps():
  assert scanned.found('''
      import tensorflow as tf

      class GAN(object):

        def build(self, z, x):
          self.g_w = tf.Variable(tf.zeros([8, 4]))
          self.d_w = tf.Variable(tf.zeros([4, 1]))
          fake = tf.matmul(z, self.g_w)
          d_real = tf.matmul(x, self.d_w)
          d_fake = tf.matmul(fake, self.d_w)
          d_loss = -tf.reduce_mean(tf.log(d_real) + tf.log(1. - d_fake))
          g_loss = -tf.reduce_mean(tf.log(d_fake))
          d_opt = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=[
              self.d_w])
          g_opt = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=[
              self.g_w])
          return d_opt, g_opt
      ''') == []


def test_an_autoencoders_two_halves_trained_by_two_steps():
  assert scanned.found('''
      import tensorflow as tf

      class AE(object):

        def build(self, x):
          self.enc = {'weights': tf.Variable(tf.zeros([8, 4]))}
          self.dec = {'weights': tf.Variable(tf.zeros([4, 8]))}
          out = tf.matmul(tf.matmul(x, self.enc['weights']),
                          self.dec['weights'])
          cost = tf.reduce_mean(tf.square(out - x))
          enc_opt = tf.train.AdamOptimizer(1e-3).minimize(cost, var_list=[
              self.enc['weights']])
          dec_opt = tf.train.AdamOptimizer(1e-3).minimize(cost, var_list=[
              self.dec['weights']])
          return enc_opt, dec_opt
      ''') == []


def test_a_savers_hand_written_list_stays_silent():
  assert scanned.found('''
      import tensorflow as tf

      class Net(object):

        def build(self, x, y):
          self.w1 = tf.Variable(tf.zeros([4, 4]))
          self.w2 = tf.Variable(tf.zeros([4, 1]))
          cost = tf.reduce_mean(tf.square(
              tf.matmul(tf.matmul(x, self.w1), self.w2) - y))
          saver = tf.train.Saver(var_list=[self.w1])
          train = tf.train.AdamOptimizer(1e-3).minimize(cost)
          return saver, train
      ''') == []


# An Estimator's model_fn that reaches its model by name from a config;
# the model's own file warm-starts its CNN block and opens the head scope.
_MODEL = '''
import tensorflow as tf

def cnn_rnn_model(features, params, is_training):
  with tf.variable_scope("CNN_block"):
    output = tf.layers.conv2d(features, 32, 3)
  if params['pretrained_weights']:
    tf.contrib.framework.init_from_checkpoint(
        params['pretrained_weights'], {'CNN_block/': 'CNN_block/'})
  with tf.variable_scope("NetworkHead"):
    logits = tf.layers.dense(tf.layers.flatten(output), 2)
  return logits
'''

_TRAIN = '''
import importlib
import tensorflow as tf

def train(config):
  model = getattr(importlib.import_module(config['module']),
                  config['model'])

  def model_fn(features, labels, mode, params):
    logits = model(features, params, mode == tf.estimator.ModeKeys.TRAIN)
    loss = tf.losses.softmax_cross_entropy(labels, logits)
    optimizer = tf.train.AdamOptimizer(1e-3)
    if params['freeze_weights']:
      vars_to_train = tf.get_collection(
          tf.GraphKeys.TRAINABLE_VARIABLES, "NetworkHead")
    else:
      vars_to_train = None
    train_op = tf.contrib.slim.learning.create_train_op(
        loss, optimizer, variables_to_train=vars_to_train)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
  return tf.estimator.Estimator(model_fn)
'''


def test_a_head_scope_trained_on_a_block_its_model_warm_starts():
  assert ("var-list-filter", "train.py", 14) in scanned.in_project(
      {"models/cnn_rnn.py": _MODEL, "train.py": _TRAIN})


def test_a_head_scope_of_a_model_that_restores_nothing_stays_silent():
  model = _MODEL.replace("""  if params['pretrained_weights']:
    tf.contrib.framework.init_from_checkpoint(
        params['pretrained_weights'], {'CNN_block/': 'CNN_block/'})
""", "")
  assert scanned.in_project(
      {"models/cnn_rnn.py": model, "train.py": _TRAIN}) == []
