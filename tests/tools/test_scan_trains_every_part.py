"""`tfpartial scan` still finds part thirty-three's partial freezes in
the shape of its negative codebases that train every part (federated
averaging, moving statistics added to every trainable variable, an
asynchronous worker's gradients, gradients fetched to be printed): a
federated loop that averages only the first layer and writes the rest
back, a client whose first kernel is put back from a copy saved before
training, a filter that keeps a head and adds the moving statistics, a
worker's gradients applied to its own filtered list, gradients of a part
applied to that part, gradients of one variable applied to it.
The silencers of those negatives were removed (review rd-f53: they hid
real freezes); tests/tools/test_scan_mend39_unsilenced.py holds the
programs they hid. Synthetic sources in the shape of the real code."""

import pytest
import scanned

# A model builder and the start of a federated loop over its clients.
_FEDERATED = """\
    import numpy as np
    import tensorflow as tf

    def build():
      model = tf.keras.Sequential([tf.keras.layers.Dense(4),
                                   tf.keras.layers.Dense(1)])
      model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
      return model

    def federated(train, rounds):
      clients = len(train)
"""

_FEDAVG = _FEDERATED + """\
      model_global = build()
      w_global = model_global.get_weights()
      w_locals = [0] * clients
      model_local = [build() for _ in range(clients)]
      best = 1e10
      for r in range(rounds):
        for j in range(clients):
          model_local[j].set_weights(w_global)
          model_local[j].fit(train[j][0], train[j][1], epochs=1, verbose=0)
          w_locals[j] = model_local[j].get_weights()
        for k in range(len(w_global)):
          w_global[k] = w_locals[0][k]
          for j in range(1, clients):
            w_global[k] += np.array(w_locals[j][k])
          w_global[k] = w_global[k] / clients
        model_global.set_weights(w_global)
        loss = model_global.evaluate(train[0][0], train[0][1], verbose=0)
        if loss < best:
          best = loss
          best_weights = w_global
      w_global = best_weights
      model_global.set_weights(w_global)
      return model_global
    """

# The client's first kernel put back from a copy saved before training,
# after each local step: a hand-made freeze inside a federated loop.
_FEDAVG_KEPT = _FEDERATED + """\
      model_local = [build() for _ in range(clients)]
      saved = model_local[0].get_weights()
      for r in range(rounds):
        for j in range(clients):
          model_local[j].fit(train[j][0], train[j][1], epochs=1, verbose=0)
          weights = model_local[j].get_weights()
          weights[0][:2] = saved[0][:2]
          model_local[j].set_weights(weights)
      return model_local
    """


# Only the first kernel and bias averaged: the global model's other
# entries are written back from its weights saved before training.
_FEDAVG_HEAD = _FEDAVG.replace("for k in range(len(w_global)):",
                               "for k in range(2):")


def test_federated_averaging_of_the_first_layer_only_is_found():
  assert scanned.found(_FEDAVG_HEAD) == [
      ("write-back", 19), ("write-back", 27), ("write-back", 33)]


def test_a_client_kernel_put_back_from_a_saved_copy_is_found():
  assert scanned.found(_FEDAVG_KEPT) == [("write-back", 19)]


_SAVER = """\
    import tensorflow as tf

    def get_saver():
      global_list = tf.compat.v1.global_variables()
      trainable_list = {listed}
      bn_moving_vars = [g for g in global_list if 'moving_mean' in g.name]
      bn_moving_vars += [g for g in global_list
                         if 'moving_variance' in g.name]
      trainable_list += bn_moving_vars
      saver = tf.compat.v1.train.Saver(trainable_list)
      restore_list = [t for t in trainable_list if 'logits' not in t.name]
      restorer = tf.compat.v1.train.Saver(restore_list)
      return saver, restorer, trainable_list, restore_list

    def get_train_op(total_loss, trainable_list, global_step):
      opt = tf.compat.v1.train.AdamOptimizer(1e-3)
      grads = opt.compute_gradients(total_loss, var_list=trainable_list)
      return opt.apply_gradients(grads, global_step=global_step)
    """

_SAVER_MAIN = """\
    import tensorflow as tf
    import utils
    from model import build

    loss = build()
    global_step = tf.compat.v1.train.get_or_create_global_step()
    saver, restorer, trainable_list, _ = utils.get_saver()
    train_op = utils.get_train_op(loss, trainable_list, global_step)
    with tf.compat.v1.Session() as sess:
      restorer.restore(sess, 'pretrained.ckpt')
      for _ in range(100):
        sess.run(train_op)
    """

_MODEL = """\
    import tensorflow as tf

    def build():
      x = tf.compat.v1.placeholder(tf.float32, [None, 4])
      h = tf.compat.v1.layers.dense(x, 4, name='features')
      h = tf.compat.v1.layers.batch_normalization(h, training=True)
      y = tf.compat.v1.layers.dense(h, 1, name='logits')
      return tf.reduce_mean(y)
    """


def test_a_head_with_the_moving_statistics_added_is_found():
  # Only the head's trainable variables, the moving statistics added.
  listed = ("[v for v in tf.compat.v1.trainable_variables() "
            "if 'logits' in v.name]")
  files = {"utils.py": _SAVER.format(listed=listed),
           "train.py": _SAVER_MAIN, "model.py": _MODEL}
  assert scanned.in_project(files) == [("var-list-filter", "utils.py", 5)]


_WORKER = """\
    import tensorflow as tf

    class ParameterServer:
      def __init__(self):
        with tf.variable_scope("parameter_server"):
          self.model = build_model()
        self.weights_params = tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, scope="parameter_server")
        self.optimizer = tf.train.RMSPropOptimizer(1e-3, 0.99)

    class LocalBrain:
      def __init__(self, name, parameter_server):
        with tf.name_scope(name):
          self.model = build_model()
          self.build_graph(name, parameter_server)

      def build_graph(self, name, parameter_server):
        self.s_t = tf.placeholder(tf.float32, shape=(None, 4))
        p, v = self.model(self.s_t)
        self.loss_total = tf.reduce_mean(tf.square(v)) - tf.reduce_mean(p)
        self.weights_params = tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, scope=name)
        self.grads = tf.gradients(self.loss_total, self.weights_params)
        self.update_global = parameter_server.optimizer.apply_gradients(
            zip(self.grads, {applied}))
        self.pull_global = [l_p.assign(g_p) for l_p, g_p in zip(
            self.weights_params, parameter_server.weights_params)]

    def build_model():
      inputs = tf.keras.layers.Input(batch_shape=(None, 4))
      hidden = tf.keras.layers.Dense(16, activation='relu')(inputs)
      p = tf.keras.layers.Dense(2, activation='softmax')(hidden)
      v = tf.keras.layers.Dense(1)(hidden)
      return tf.keras.Model(inputs=[inputs], outputs=[p, v])

    server = ParameterServer()
    brains = [LocalBrain('local_thread%d' % i, server) for i in range(4)]
    """

# Gradients of a part of a model applied to that part: the rest is left
# out by the filter.
_PART = """\
    import tensorflow as tf

    def build(x, y):
      with tf.variable_scope('body'):
        h = tf.layers.dense(x, 8)
      with tf.variable_scope('head'):
        out = tf.layers.dense(h, 1)
      loss = tf.reduce_mean(tf.square(out - y))
      head_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, {scope})
      grads = tf.gradients(loss, head_vars)
      opt = tf.train.AdamOptimizer(1e-3)
      return opt.apply_gradients(zip(grads, head_vars))
    """


def test_worker_gradients_applied_to_its_own_list_are_found():
  code = _WORKER.format(applied="self.weights_params")
  assert scanned.found(code) == [("var-list-filter", 21)]


@pytest.mark.parametrize("scope, expected", [
    ("'head'", [("var-list-filter", 9)]),
    ("scope='head'", [("var-list-filter", 9)]),
], ids=["positional", "keyword"])
def test_gradients_of_a_part_applied_to_it_are_found(scope, expected):
  assert scanned.found(_PART.format(scope=scope)) == expected


_PRINTED = """\
    import tensorflow as tf

    x = tf.placeholder(tf.float32, [1, 2])
    y = tf.placeholder(tf.float32, [1, 1])
    h = tf.layers.dense(x, 1, name="l2", use_bias=False)
    weights = tf.trainable_variables()
    loss = tf.losses.mean_squared_error(y, h)
    grad1 = tf.gradients(loss, weights[0])[0]
    op = tf.train.GradientDescentOptimizer(0.1)
    train = op.minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for i in range(10):
      _, loss_result, weights_result, gradients1 = sess.run(
          [train, loss, weights, grad1], feed_dict={x: [[3, 2]], y: [[6]]})
      print("grad", gradients1, gradients1.var())
    """

# The same gradients applied to their variable: only it trains.
_APPLIED = _PRINTED.replace(
    "train = op.minimize(loss)",
    "train = op.apply_gradients([(grad1, weights[0])])")


def test_gradients_of_one_variable_applied_to_it_are_found():
  assert scanned.found(_APPLIED) == [("var-list-filter", 8)]
