"""A TensorFlow gradient handed to an optimizer outside TensorFlow with
elements zeroed (`grad = grad.numpy(); grad[idx] = 0` in the callback of
`scipy.optimize.minimize(..., jac=True)`, part 23's combinetf2; `jac=fn`;
`iminuit.Minuit(fcn, x0, grad=fn)`) keeps those parameters fixed: a
grads-mask whose apply is that optimizer. A callback that returns the
gradient as computed, or a `.numpy()` gradient only logged, is silent."""

import pytest

import scanned

_found = scanned.found

_FITTER = '''
import numpy as np
import scipy.optimize
import tensorflow as tf
from iminuit import Minuit


class Fitter:
  def __init__(self, n):
    self.x = tf.Variable(np.zeros(n))

  def loss_val_grad(self):
    with tf.GradientTape() as t:
      val = tf.reduce_sum(self.x ** 2)
    grad = t.gradient(val, self.x)
    return val, grad

  def fit_frozen(self, idx):
    def scipy_loss(xval):
      self.x.assign(xval)
      val, grad = self.loss_val_grad()
      grad = grad.numpy()
      {zeroing}
      return val.numpy(), grad

    def loss(xval):
      return scipy_loss(xval)[0]

    def gradient(xval):
      return scipy_loss(xval)[1]

    return {fit}
'''


def _source(fit, zeroing="grad[idx] = 0"):
  return _FITTER.replace("{fit}", fit).replace("{zeroing}", zeroing)


_JAC_TRUE = "scipy.optimize.minimize(scipy_loss, self.x, jac=True)"
_JAC_FN = "scipy.optimize.minimize(loss, self.x, jac=gradient)"
_MINUIT = "Minuit(loss, np.zeros(3), grad=gradient).migrad()"

CASES = [
    pytest.param(_source(_JAC_TRUE), [("grads-mask", 23)],
                 id="scipy_jac_true"),
    pytest.param(_source(_JAC_FN), [("grads-mask", 23)],
                 id="scipy_jac_function"),
    pytest.param(_source(_MINUIT), [("grads-mask", 23)], id="minuit_grad"),
    pytest.param(_source(_JAC_TRUE, zeroing="pass"), [],
                 id="scipy_gradient_as_computed"),
    pytest.param(_source(_JAC_TRUE, zeroing="print(grad[idx])"), [],
                 id="scipy_gradient_logged"),
    pytest.param(_source("scipy.optimize.minimize(scipy_loss, self.x)"), [],
                 id="scipy_gradient_not_used"),
    pytest.param(_source("scipy.optimize.minimize(loss, self.x, "
                         "jac='2-point')"), [],
                 id="scipy_finite_differences"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_grads_mask_external(source, expected):
  assert _found(source) == expected


def test_numpy_gradient_only_logged():
  assert _found('''
import numpy as np
import tensorflow as tf

x = tf.Variable(np.zeros(3))
optimizer = tf.keras.optimizers.SGD(0.1)
for _ in range(10):
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(x ** 2)
  grad = tape.gradient(loss, x)
  shown = grad.numpy()
  shown[0] = 0
  print(shown)
  optimizer.apply_gradients([(grad, x)])
''') == []
