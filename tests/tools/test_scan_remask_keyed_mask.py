"""A weight re-masked by a mask compared from values looked up by the
variable (`sens[weight_variable] >= threshold`, part 23's MNN pruners)
is a fixed mask, not one pruned anew by the weight's own values: found.
A mask compared from the weight's own magnitude stays silent, keyed
lookup beside it or not."""

import pytest

import scanned

_found = scanned.found

_PRUNER = '''
import tensorflow as tf


class Pruner(object):
  def __init__(self, sensitivities):
    self._sens = sensitivities

  def prune(self, weight_variable, threshold):
    {line}
    mask = tf.cast(m_const >= threshold, tf.float32)
    new_weight = tf.assign(weight_variable, weight_variable * mask)
    tf.add_to_collection("update_pruning_masks", new_weight)
    return new_weight


def train(loss, variables, pruner, steps):
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
  remask = [pruner.prune(v, 0.5) for v in variables]
  with tf.Session() as sess:
    for _ in range(steps):
      sess.run(train_op)
      sess.run(remask)
'''


def _source(line):
  return _PRUNER.replace("{line}", line)


CASES = [
    pytest.param(_source("m_const = self._sens[weight_variable]"),
                 [("weight-remask", 12)], id="keyed_by_variable"),
    pytest.param(_source("m_const = self._sens[weight_variable.name]"),
                 [("weight-remask", 12)], id="keyed_by_name"),
    pytest.param(_source("m_const = tf.abs(weight_variable)"), [],
                 id="own_magnitude"),
    pytest.param(_source("m_const = self._sens[weight_variable] * "
                         "tf.abs(weight_variable)"), [],
                 id="keyed_times_own_magnitude"),
    pytest.param(_source("m_const = tf.abs(weight_variable)[0]"), [],
                 id="own_magnitude_indexed"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_remask_keyed_mask(source, expected):
  assert _found(source) == expected
