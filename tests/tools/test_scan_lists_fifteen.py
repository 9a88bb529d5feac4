"""Part fifteen's var-list-filter forms (j19-lists-b): each source with the
findings it must give, and beside it a look-alike that must stay silent."""

import pytest

import scanned

_found = scanned.found

_JOINED = '''
import tensorflow as tf

class Trainer:
  def __init__(self, config, losses):
    self.exclude = config.str("optimizer_exclude_prefix", "")
    self.opt = tf.train.AdamOptimizer(1e-3)
    tower_grads = []
    for loss in losses:
      var_list = (tf.trainable_variables() +
                  tf.get_collection(tf.GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
      if self.exclude != "":
        var_list = [x for x in var_list if not x.name.startswith(self.exclude)]
      tower_grads.append(self.opt.compute_gradients(loss, var_list=var_list))
    self.step = self.opt.apply_gradients(tower_grads[0])
'''

_JOINED_WHOLE = '''
import tensorflow as tf

class Trainer:
  def __init__(self, losses):
    self.opt = tf.train.AdamOptimizer(1e-3)
    tower_grads = []
    for loss in losses:
      var_list = (tf.trainable_variables() +
                  tf.get_collection(tf.GraphKeys.TRAINABLE_RESOURCE_VARIABLES))
      var_list = [x for x in var_list if x is not None]
      tower_grads.append(self.opt.compute_gradients(loss, var_list=var_list))
    self.step = self.opt.apply_gradients(tower_grads[0])
'''

_SUMMED_WEIGHTS = '''
import tensorflow as tf

def train(x, y):
  w = tf.Variable(tf.zeros([3]), name="w")
  b = tf.Variable(tf.zeros([3]), name="b")
  total = w + b
  kept = [v for v in [w, b] if v is not None]
  loss = tf.reduce_sum(total * x - y)
  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=kept)
'''

CASES = [
    # Two of the graph's lists joined, then filtered by a configured prefix.
    pytest.param(_JOINED, [("var-list-filter", 13)], id="joined-lists"),
    # The same lists joined and passed on whole: nothing left out.
    pytest.param(_JOINED_WHOLE, [], id="joined-lists-whole"),
    # Two variables added are arithmetic, not a list.
    pytest.param(_SUMMED_WEIGHTS, [], id="summed-weights"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_lists_fifteen(source, expected):
  assert _found(source) == expected
