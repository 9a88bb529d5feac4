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

_WARM_UP = '''
import tensorflow as tf

def train(loss_sr, loss_all, max_step):
  vars_all = tf.trainable_variables()
  vars_sr = [v for v in vars_all if 'srmodel' in v.name]
  train_all = tf.train.AdamOptimizer(1e-3).minimize(loss_all, var_list=vars_all)
  train_sr = tf.train.AdamOptimizer(1e-3).minimize(loss_sr, var_list=vars_sr)
  sess = tf.Session()
  for step in range(max_step):
    if step < 10000:
      train_op = train_sr
    else:
      train_op = train_all
    sess.run(train_op)
'''

_RUN_OUTSIDE = '''
import tensorflow as tf

class Flow(object):
  def forward(self, a, b, reuse=False):
    with tf.variable_scope('easyflow', reuse=reuse):
      return tf.layers.conv2d(tf.concat([a, b], -1), 2, 3)

class VSR(object):
  def __init__(self):
    self.flownets = Flow()

  def forward(self, frames):
    warped = []
    for i in range(3):
      uv = self.flownets.forward(frames[i], frames[1], reuse=i > 0)
      warped.append(frames[i] + uv)
    with tf.variable_scope('srmodel'):
      return tf.layers.conv2d(tf.concat(warped, -1), 1, 3)

  def train(self, frames, target):
    loss = tf.reduce_mean((self.forward(frames) - target) ** 2)
    vars_sr = [v for v in tf.trainable_variables() if 'srmodel' in v.name]
    return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=vars_sr)
'''

_READER_OUTSIDE = _RUN_OUTSIDE.replace(
    "    with tf.variable_scope('easyflow', reuse=reuse):\n"
    "      return tf.layers.conv2d(tf.concat([a, b], -1), 2, 3)\n",
    "    return a - b\n")

_BY_STAGE = _WARM_UP.replace(
    "    if step < 10000:\n      train_op = train_sr\n    else:\n"
    "      train_op = train_all\n",
    "    train_op = train_sr if FLAGS.optim == 'adam' else train_all\n")

_NARROWER_FIRST = '''
import tensorflow as tf

def train(loss, params, usr_embs, mov_embs, epochs, warm):
  train_nn = tf.train.AdamOptimizer(1e-3).minimize(
      loss, var_list=list(params.values()))
  train_all = tf.train.AdamOptimizer(1e-4).minimize(
      loss, var_list=list(params.values()) + [usr_embs, mov_embs])
  with tf.Session() as sess:
    for epoch in range(epochs):
      if epoch < warm:
        sess.run(train_nn)
      else:
        sess.run(train_all)
'''

CASES = [
    # Two of the graph's lists joined, then filtered by a configured prefix.
    pytest.param(_JOINED, [("var-list-filter", 13)], id="joined-lists"),
    # The same lists joined and passed on whole: nothing left out.
    pytest.param(_JOINED_WHOLE, [], id="joined-lists-whole"),
    # Two variables added are arithmetic, not a list.
    pytest.param(_SUMMED_WEIGHTS, [], id="summed-weights"),
    # A step trained alone while the loop's counter is below a bound.
    pytest.param(_WARM_UP, [("var-list-filter", 6)], id="warm-up"),
    # Ops alternating every other step: each half trains in turn.
    pytest.param(_WARM_UP.replace("step < 10000", "step % 2 == 0"), [],
                 id="alternating"),
    # A configuration chooses between two optimizers' steps: no part of
    # a run trains alone (kanchen-usc QRC-Net's `if self.optim == 'adam'`).
    pytest.param(_BY_STAGE, [], id="by-configuration"),
    # Both steps run every step: the two losses' halves.
    pytest.param(_BY_STAGE.replace(
        "    train_op = train_sr if FLAGS.optim == 'adam' else train_all\n",
        "")
                 .replace("sess.run(train_op)", "sess.run([train_sr, train_all])"),
                 [], id="side-by-side"),
    # Part of a later step's list trained alone for the first epochs.
    pytest.param(_NARROWER_FIRST, [("var-list-filter", 6)],
                 id="narrower-first"),
    # The same two lists trained one after the other in every epoch.
    pytest.param(_NARROWER_FIRST.replace(
        "      if epoch < warm:\n        sess.run(train_nn)\n      else:\n"
        "        sess.run(train_all)\n",
        "      sess.run(train_nn)\n      sess.run(train_all)\n"), [],
                 id="narrower-each-epoch"),
    # A network kept on `self` runs before the trained scope opens.
    pytest.param(_RUN_OUTSIDE, [("var-list-filter", 23)], id="run-outside"),
    # A reader kept on `self` builds no variables: the scope is the model.
    pytest.param(_READER_OUTSIDE, [], id="reader-outside"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_lists_fifteen(source, expected):
  assert _found(source) == expected
