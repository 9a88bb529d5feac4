"""A mask of the weight's magnitude evaluated once in the session before
the loop that re-applies it after each step (`mask = np.abs(sess.run(W))
> limit`, then `W.assign(W * mask)` in the loop; part 26's GeneNet) is a
snapshot kept, not magnitude pruning anew: found, in a function or in
module code, with a TF1 `eval` or a Keras `get_value`. The same
comparison evaluated again in the loop, a comparison in the graph
(`tf.abs(W) > t`, recomputed with each run), a mask applied once before
training or after it: silent."""

import pytest

import scanned

_found = scanned.found

# Every program below: the imports, then one weight trained by one step.
_IMPORTS = """
import numpy as np
import tensorflow as tf
"""
_KERAS = "from tensorflow.keras import backend as K\n"
_GRAPH = """
W = tf.Variable(tf.zeros([3, 3]))
cost = tf.reduce_sum(W * W)
train_step = tf.train.AdamOptimizer(0.1).minimize(cost)
sess = tf.Session()
"""

_TRAIN = _IMPORTS + _KERAS + _GRAPH + '''

def train_model(iterations, limit=1.0):
  {before}
  for i in range(iterations):
    sess.run(train_step)
    {inside}
    sess.run(W.assign(W * mask))


train_model(100)
'''

_MODULE = _IMPORTS + _GRAPH + '''keep = np.abs(sess.run(W)) > 0.5
step = 0
while step < 100:
  sess.run(train_step)
  sess.run(W.assign(W * keep))
  step += 1
'''

_ONCE = _IMPORTS + _GRAPH + '''

def train_model(iterations, limit=1.0):
  {before}
  for i in range(iterations):
    sess.run(train_step)
  {after}


train_model(100)
'''


# The write op built once before the loop, only run in it (GeneNet's
# `_kept_before` gap): `{built}` is its op, `{loop}` the loop's body.
_BUILT = _IMPORTS + _KERAS + _GRAPH + '''

def train_model(iterations, limit=1.0):
  {mask}
  {built}
  {before}
  for i in range(iterations):
    {loop}
'''


def _built(mask, built, loop, before="pass"):
  return _BUILT.replace("{mask}", mask).replace("{built}", built).replace(
      "{loop}", loop).replace("{before}", before)


def _train(before, inside="pass"):
  return _TRAIN.replace("{before}", before).replace("{inside}", inside)


def _once(before, after):
  return _ONCE.replace("{before}", before).replace("{after}", after)


CASES = [
    pytest.param(_train("mask = np.abs(sess.run(W)) > limit"),
                 [("weight-remask", 17)], id="run_before_loop"),
    pytest.param(_train("mask = (np.abs(W.eval(session=sess)) > limit)"
                        ".astype(np.float32)"),
                 [("weight-remask", 17)], id="eval_before_loop"),
    pytest.param(_train("mask = K.get_value(W) > limit"),
                 [("weight-remask", 17)], id="get_value_before_loop"),
    pytest.param(_MODULE, [("weight-remask", 13)], id="module_while"),
    pytest.param(_built("mask = np.abs(sess.run(W)) > limit",
                        "remask = W.assign(W * mask)",
                        "sess.run(train_step)\n    sess.run(remask)"),
                 [("weight-remask", 14)], id="op_built_before_loop"),
    pytest.param(_built("keep = (K.get_value(W) > limit).astype('f')",
                        "ops = [tf.assign(W, tf.multiply(W, keep))]",
                        "sess.run([train_step])\n    sess.run(ops)"),
                 [("weight-remask", 14)], id="op_list_built_before_loop"),
    # Silent twins.
    pytest.param(_built("mask = np.abs(sess.run(W)) > limit",
                        "remask = W.assign(W * mask)",
                        "sess.run(train_step)", "sess.run(remask)"), [],
                 id="op_built_before_loop_run_once"),
    pytest.param(_built("mask = tf.cast(tf.abs(W) > limit, tf.float32)",
                        "remask = W.assign(W * mask)",
                        "sess.run(train_step)\n    sess.run(remask)"), [],
                 id="op_built_before_loop_graph_comparison"),
    pytest.param(_built("mask = np.abs(sess.run(W)) > limit",
                        "remask = W.assign(W * mask)",
                        "print(sess.run(cost))\n    sess.run(remask)",
                        "sess.run(train_step)"), [],
                 id="op_built_before_loop_without_step"),
    pytest.param(_train("pass", "mask = np.abs(sess.run(W)) > limit"), [],
                 id="evaluated_again_in_loop"),
    pytest.param(_train("mask = tf.cast(tf.abs(W) > limit, tf.float32)"),
                 [], id="graph_comparison"),
    pytest.param(_once("mask = np.abs(sess.run(W)) > limit\n"
                       "  sess.run(W.assign(W * mask))", "pass"), [],
                 id="pruned_once_before_training"),
    pytest.param(_once("pass", "mask = np.abs(sess.run(W)) > limit\n"
                       "  for j in range(3):\n"
                       "    sess.run(W.assign(W * mask))"), [],
                 id="pruned_after_training"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_remask_evaluated_once(source, expected):
  assert _found(source) == expected
