"""Part sixteen's var-list-filter forms (t16-b): a helper filtering the
pairs it is given, and a wrapper optimizer filtering the `var_list` its
callers pass; each source with the findings it must give, and beside it
a look-alike that must stay silent."""

import pytest

import scanned

_found = scanned.found

_PAIRS_HELPER = '''
import tensorflow as tf

def dense_grad_filter(gvs):
  return [(g, v) for g, v in gvs if 'dense' in v.name]

def train(loss, fc_only):
  optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
  grad_vars = optimizer.compute_gradients(loss)
  if fc_only:
    grad_vars = dense_grad_filter(grad_vars)
  return optimizer.apply_gradients(grad_vars)
'''

_PAIRS_HELPER_NONE = '''
import tensorflow as tf

def present(gvs):
  return [(g, v) for g, v in gvs if g is not None]

def train(loss):
  optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
  grad_vars = optimizer.compute_gradients(loss)
  grad_vars = present(grad_vars)
  return optimizer.apply_gradients(grad_vars)
'''

_WRAPPER = '''
import tensorflow as tf

class ClipOptimizer(object):
  def __init__(self, optimizer, trainable_scope=None):
    self._optimizer = optimizer
    self.trainable_scope = trainable_scope

  def compute_gradients(self, loss, var_list=None):
    if self.trainable_scope is not None:
      new_var_list = [v for v in var_list
                      if any([nm in v.name for nm in self.trainable_scope])]
      if len(new_var_list):
        var_list = new_var_list
    if var_list is not None:
      print(len(var_list))
    return self._optimizer.compute_gradients(loss, var_list=var_list)

  def apply_gradients(self, grads_and_vars):
    return self._optimizer.apply_gradients(grads_and_vars)

def train(loss, scope):
  opt = ClipOptimizer(tf.train.AdamOptimizer(0.1), trainable_scope=scope)
  gvs = opt.compute_gradients(loss, tf.trainable_variables())
  return opt.apply_gradients(gvs)
'''

_WRAPPER_DEFAULT = '''
import tensorflow as tf

class ClipOptimizer(object):
  def __init__(self, optimizer):
    self._optimizer = optimizer

  def compute_gradients(self, loss, var_list=None):
    if var_list is None:
      var_list = tf.trainable_variables()
    var_list = [v for v in var_list if v is not None]
    return self._optimizer.compute_gradients(loss, var_list=var_list)

  def apply_gradients(self, grads_and_vars):
    return self._optimizer.apply_gradients(grads_and_vars)

def train(loss):
  opt = ClipOptimizer(tf.train.AdamOptimizer(0.1))
  gvs = opt.compute_gradients(loss, tf.trainable_variables())
  return opt.apply_gradients(gvs)
'''

_CLIPPED_APPLY = '''
import tensorflow as tf

def train(loss, multiplier, threshold):
  opt = tf.train.AdamOptimizer(1e-3)
  grad_var_list = []
  for t in tf.trainable_variables():
    v = t.op.name
    if (v in multiplier) and (abs(multiplier[v]) < 1e-6):
      pass
    else:
      grad_var_list.append(t)
  grads = opt.compute_gradients(loss, var_list=grad_var_list)
  if threshold > 0:
    t_list = [x[0] for x in grads]
    t_list, gnorm = tf.clip_by_global_norm(t_list, threshold)
    grads = [(t_list[i], grads[i][1]) for i in range(len(t_list))]
  return opt.apply_gradients(grads)
'''

_CLIPPED_APPLY_ALL = '''
import tensorflow as tf

def train(loss, threshold):
  opt = tf.train.AdamOptimizer(1e-3)
  grads = opt.compute_gradients(loss, var_list=tf.trainable_variables())
  if threshold > 0:
    t_list = [x[0] for x in grads]
    t_list, gnorm = tf.clip_by_global_norm(t_list, threshold)
    grads = [(t_list[i], grads[i][1]) for i in range(len(t_list))]
  return opt.apply_gradients(grads)
'''

CASES = [
    # Variables whose multiplier is zero left out, the gradients clipped
    # and rebuilt before the apply: one training, one filter.
    pytest.param(_CLIPPED_APPLY, [("var-list-filter", 12)],
                 id="clipped-apply"),
    # Every variable, clipped and rebuilt the same way: nothing left out.
    pytest.param(_CLIPPED_APPLY_ALL, [], id="clipped-apply-all"),
    # A helper keeps the pairs of some variables by name, under a flag.
    pytest.param(_PAIRS_HELPER, [("var-list-filter", 11)],
                 id="pairs-helper"),
    # A helper keeping the pairs that have a gradient: nothing chosen.
    pytest.param(_PAIRS_HELPER_NONE, [], id="pairs-helper-present"),
    # A wrapper optimizer's `compute_gradients` keeps its scopes' variables.
    pytest.param(_WRAPPER, [("var-list-filter", 11)], id="wrapper-scope"),
    # A wrapper filling in the default list and dropping `None`s.
    pytest.param(_WRAPPER_DEFAULT, [], id="wrapper-default"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_lists_sixteen_b(source, expected):
  assert _found(source) == expected
