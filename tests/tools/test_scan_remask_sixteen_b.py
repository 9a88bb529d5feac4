"""Part sixteen's weight-remask form (t16-b): a layer's coefficients made
trainable, and non-trainable only where an option fixes them, re-masked
by a fixed 0/1 mask in every step; beside it a variable that is never
trainable, re-masked the same way, stays silent."""

import pytest

import scanned

_found = scanned.found

_FIXED_BY_OPTION = '''
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers


class Sindy(layers.Layer):
  def __init__(self, coefs, fix_coefs=False, **kwargs):
    super(Sindy, self).__init__(**kwargs)
    self.coefficients = tf.Variable(initial_value=coefs, name='sindy_coeffs', dtype=tf.float32)
    if fix_coefs:
      self.coefficients = tf.Variable(initial_value=coefs, name='sindy_coeffs', trainable=False, dtype=tf.float32)

  def call(self, z):
    return tf.matmul(z, self.coefficients)


class SindyAutoencoder(tf.keras.Model):
  def __init__(self, params, **kwargs):
    super(SindyAutoencoder, self).__init__(**kwargs)
    self.sindy = Sindy(params['coefs'])
    self.actual_coefs = params['coefs']
    self.fixed_coefficient_mask = None
    if params['fixed_coefficient_mask']:
      self.fixed_coefficient_mask = tf.constant(value=np.abs(self.actual_coefs) > 1e-10, dtype=tf.float32)

  def call(self, x):
    return self.sindy(x)

  @tf.function
  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      loss = self.get_loss(x, y)
    trainable_vars = self.trainable_variables
    gradients = tape.gradient(loss, trainable_vars)
    self.optimizer.apply_gradients(zip(gradients, trainable_vars))
    return {"loss": loss}

  def get_loss(self, x, y):
    loss = tf.reduce_mean(tf.square(self(x) - y))
    loss_l1 = tf.reduce_mean(tf.abs(self.sindy.coefficients))
    loss += loss_l1
    if self.fixed_coefficient_mask is not None:
      self.sindy.coefficients.assign(tf.multiply(self.sindy.coefficients, self.fixed_coefficient_mask))
    return loss
'''

_NEVER_TRAINED = '''
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers


class Sindy(layers.Layer):
  def __init__(self, coefs, fix_coefs=False, **kwargs):
    super(Sindy, self).__init__(**kwargs)
    self.coefficients = tf.Variable(initial_value=coefs, name='sindy_coeffs', trainable=False, dtype=tf.float32)

  def call(self, z):
    return tf.matmul(z, self.coefficients)


class SindyAutoencoder(tf.keras.Model):
  def __init__(self, params, **kwargs):
    super(SindyAutoencoder, self).__init__(**kwargs)
    self.sindy = Sindy(params['coefs'])
    self.actual_coefs = params['coefs']
    self.fixed_coefficient_mask = None
    if params['fixed_coefficient_mask']:
      self.fixed_coefficient_mask = tf.constant(value=np.abs(self.actual_coefs) > 1e-10, dtype=tf.float32)

  def call(self, x):
    return self.sindy(x)

  @tf.function
  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      loss = self.get_loss(x, y)
    trainable_vars = self.trainable_variables
    gradients = tape.gradient(loss, trainable_vars)
    self.optimizer.apply_gradients(zip(gradients, trainable_vars))
    return {"loss": loss}

  def get_loss(self, x, y):
    loss = tf.reduce_mean(tf.square(self(x) - y))
    loss_l1 = tf.reduce_mean(tf.abs(self.sindy.coefficients))
    loss += loss_l1
    if self.fixed_coefficient_mask is not None:
      self.sindy.coefficients.assign(tf.multiply(self.sindy.coefficients, self.fixed_coefficient_mask))
    return loss
'''

CASES = [
    # Trainable unless an option fixes them: the re-mask freezes zeros.
    pytest.param(_FIXED_BY_OPTION, [("weight-remask", 45)],
                 id="fixed-by-option"),
    # Never trainable: a state written by hand, nothing frozen.
    pytest.param(_NEVER_TRAINED, [], id="never-trained"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_remask_sixteen_b(source, expected):
  assert _found(source) == expected
