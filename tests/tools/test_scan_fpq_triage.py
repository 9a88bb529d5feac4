"""`tfpartial scan` after the triage of the unmatched findings of parts
28-32 (t52-fpq): what the code does, not how it is spelled.

- A binarized Keras layer whose straight-through cut is first bound to
  a local name is silent (the plain `tf.custom_gradient` forms, silent
  and found, are in `test_scan_straight_through.py`).
- A zero written into a feed dict under a placeholder's key
  (`feed_dict[model.flag1] = 0`, part 28's CDD-R, beside
  `feed_dict[model.store_grads] = stored_grads`) sets a switch of the
  graph, not elements of a gradient. A gradient array zeroed at the
  elements a condition chooses (`g[w == 0] = 0`) stays found.
- A head built in a canned-estimator scope (`with tf.variable_scope(
  parent) as scope:`; `absolute = scope.name`; `def _train_op_fn(loss):
  minimize(loss, var_list=get_collection(TRAINABLE_VARIABLES,
  scope=absolute))`) beside a backbone built outside it stays found.
  The rule that read such a scope as the whole model (`_outer_scope`)
  was removed (m39-fin): it hid a backbone in three reads.
- A copy network left out of the list by name stays found, its outputs
  stopped or not: the rule that silenced a stopped copy (t52-fpq) was
  removed (m39), since the filter's word can drop trained layers too.
"""

import pytest

import scanned

# --- a binarized Keras layer whose range test is bound to a name ---

_KERAS_STE = """\
    import tensorflow as tf

    @tf.custom_gradient
    def binary_activation(x):
      y = tf.sign(x)
      def grad(dy):
        mask = tf.cast(tf.abs(x) <= 1.0, dy.dtype)
        return dy * mask * 0.5
      return y, grad

    class BinaryDense(tf.keras.layers.Layer):
      def build(self, shape):
        self.w = self.add_weight("w", shape=(int(shape[-1]), 4))
      def call(self, inputs):
        return tf.matmul(binary_activation(inputs),
                         binary_activation(self.w))
    """


def test_a_binarized_layer_with_a_named_saturation_cut_is_silent():
  assert scanned.found(_KERAS_STE) == []


# --- a zero fed to a placeholder beside stored gradients ---

_FEED = """\
    import numpy as np
    import tensorflow as tf

    x = tf.placeholder(tf.float32, [None, 4])
    flag = tf.placeholder(tf.int32, [])
    w = tf.Variable(tf.zeros([4, 2]))
    store = tf.placeholder(tf.float32, [4, 2])
    loss = tf.reduce_sum(tf.matmul(x, w)) * tf.cast(flag, tf.float32)
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads = opt.compute_gradients(loss, [w])
    train = opt.apply_gradients([(store, w)])
    sess = tf.Session()
    for step in range(10):
      stored = sess.run([g for g, _ in grads], {x: np.ones([2, 4])})
      feed_dict = {x: np.ones([2, 4]), store: stored[0]}
      feed_dict[KEY] = 0
      sess.run(train, feed_dict=feed_dict)
    """


def test_a_zero_fed_under_a_placeholder_key_is_silent():
  assert scanned.in_text(_FEED.replace("KEY", "flag")) == []


_ZEROED = """\
    import numpy as np
    import tensorflow as tf

    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.Variable(tf.zeros([4, 2]))
    store = tf.placeholder(tf.float32, [4, 2])
    loss = tf.reduce_sum(tf.matmul(x, w))
    opt = tf.train.GradientDescentOptimizer(0.1)
    grads = opt.compute_gradients(loss, [w])
    train = opt.apply_gradients([(store, w)])
    sess = tf.Session()
    values = sess.run(w)
    for step in range(10):
      stored = sess.run([g for g, _ in grads], {x: np.ones([2, 4])})
      g = stored[0]
      g[values == 0] = 0
      sess.run(train, feed_dict={x: np.ones([2, 4]), store: g})
    """


def test_a_gradient_zeroed_where_a_condition_chooses_is_still_found():
  assert scanned.in_text(_ZEROED) == [("grads-mask", 16)]


# --- the canned-estimator form: a head scope beside a backbone ---

_CANNED = """\
    import tensorflow as tf

    def _build_logits(features, units):
      net = tf.layers.dense(features["x"], 16, name="hidden")
      return tf.layers.dense(net, units, name="logits")

    def _model_fn(features, labels, mode, optimizer, parent_scope):
    BACKBONE
      with tf.variable_scope(parent_scope, values=(features["x"],)) as scope:
        absolute_scope = scope.name
        logits = _build_logits(FEATURES, 2)

      def _train_op_fn(loss):
        global_step = tf.train.get_global_step()
        train_op = optimizer.minimize(
            loss,
            var_list=tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope=absolute_scope))
        with tf.control_dependencies([train_op]):
          return tf.assign_add(global_step, 1).op

      loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
      return _train_op_fn(loss)
    """


def test_a_head_scope_beside_a_backbone_outside_it_is_still_found():
  code = _CANNED.replace(
      "BACKBONE",
      "  trunk = {'x': tf.layers.dense(features['x'], 8, name='trunk')}"
  ).replace("FEATURES", "trunk")
  assert [idiom for idiom, _ in scanned.in_text(code)] == ["var-list-filter"]


# --- a copy network left out by name: found, stopped or not (m39) ---

_TEACHER = """\
    import tensorflow as tf

    class Encoder(tf.keras.layers.Layer):
      def build(self, shape):
        self.dense = tf.keras.layers.Dense(8)
      def call(self, x):
        return self.dense(x), x

    class Model(tf.keras.Model):
      def build(self, shape):
        self.encoder_frozen = Encoder(name='encoder_frozen')
        self.encoder = Encoder()
        self.head = tf.keras.layers.Dense(8, name=HEAD)
      def call(self, inputs):
        x, ref = inputs
        target, _ = self.encoder_frozen(ref, training=False)
        STOP
        h, _ = self.encoder(x)
        return tf.reduce_mean((self.head(h) - target) ** 2)

    m = Model()
    opt = tf.keras.optimizers.Adam(1e-3)

    @tf.function
    def run_step(x, ref):
      with tf.GradientTape() as tape:
        loss = m((x, ref))
      train_weights = [e for e in m.trainable_weights if 'frozen' not in e.name]
      grads = tape.gradient(loss, train_weights)
      opt.apply_gradients(zip(grads, train_weights))
    """


def _teacher(stop, head="'head'"):
  return _TEACHER.replace("STOP", stop).replace("HEAD", head)


@pytest.mark.parametrize("stop,head", [
    ("pass", "'head'"),
    ("other = tf.stop_gradient(target)", "'head'"),
    ("target = tf.stop_gradient(target)", "'head_frozen'"),
    ("target = tf.stop_gradient(target)", "'head'"),
    ("target = [tf.stop_gradient(f) for f in target]", "'head'"),
], ids=["not_stopped", "stopped_copy_unused", "trained_part_named_too",
        "stopped", "each_stopped"])
def test_a_copy_the_loss_reaches_left_out_is_still_found(stop, head):
  assert scanned.found(_teacher(stop, head)) == [("var-list-filter", 28)]
