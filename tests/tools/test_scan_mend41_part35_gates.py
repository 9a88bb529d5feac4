"""`tfpartial scan` after the review of part 35's false-positive fixes
(t57-fpa): the helper-name and opened-scope gates are gone, so a head
trained over a backbone the scan cannot name (a slim net, an LSTM, a
`module.helper` or method-built body, a helper defined twice) or built
outside the scope the method opens stays a var-list-filter finding; a
list reset each pass counts as inputs searched only when an unconditional
statement of the loop writes fresh values into it (not a max-norm clip
of itself, not `if epoch == 0:`), and a model call, not TensorFlow's own
math, runs on it; a helper whose name is read as a value
(`functools.partial`, `map`) may be called on anything, so its writes
stay write-backs."""

import pytest

import scanned


# A head `fc_*` over a backbone the scan cannot read names of.
_H1 = {
    "model.py": """\
    import tensorflow as tf
    import ops
    from ops import linear

    def net(x):
      h = ops.conv(x, 32, name="conv1")
      h = ops.conv(h, 64, name="conv2")
      h = tf.reshape(h, [-1, 64 * 64])
      h = linear(h, 256, name="fc_1")
      return linear(h, 10, name="fc_2")

    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    y = tf.placeholder(tf.int64, [None])
    logits = net(x)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits))
    head = [v for v in tf.trainable_variables() if "fc_" in v.name]
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
    saver = tf.train.Saver()
    with tf.Session() as sess:
      saver.restore(sess, "pretrained.ckpt")
      for i in range(100):
        sess.run(train)
    """,
    "ops.py": """\
    import tensorflow as tf

    def conv(x, n, name="conv"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [3, 3, x.get_shape()[-1], n])
        return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

    def linear(x, n, name="linear"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [x.get_shape()[-1], n])
        return tf.matmul(x, w)
    """,
}

_H2 = {
    "model.py": """\
    import tensorflow as tf
    from ops import conv, linear

    def net(x):
      h = conv(x, 32, name="conv1")
      h = conv(h, 64, name="conv2")
      h = tf.reshape(h, [-1, 64 * 64])
      h = linear(h, 256, name="fc_1")
      return linear(h, 10, name="fc_2")

    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    y = tf.placeholder(tf.int64, [None])
    logits = net(x)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits))
    head = [v for v in tf.trainable_variables() if "fc_" in v.name]
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
    saver = tf.train.Saver()
    with tf.Session() as sess:
      saver.restore(sess, "pretrained.ckpt")
      for i in range(100):
        sess.run(train)
    """,
    "old_utils.py": """\
    import tensorflow as tf

    def conv(x, n, name="conv"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [5, 5, x.get_shape()[-1], n])
        return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    """,
    "ops.py": """\
    import tensorflow as tf

    def conv(x, n, name="conv"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [3, 3, x.get_shape()[-1], n])
        return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

    def linear(x, n, name="linear"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [x.get_shape()[-1], n])
        return tf.matmul(x, w)
    """,
}

_H3 = {
    "model.py": """\
    import tensorflow as tf
    from ops import linear

    class Backbone(object):
      def _conv(self, x, n, name):
        with tf.variable_scope(name):
          w = tf.get_variable("w", [3, 3, x.get_shape()[-1], n])
          return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

      def __call__(self, x):
        h = self._conv(x, 32, "conv1")
        return self._conv(h, 64, "conv2")

    x = tf.placeholder(tf.float32, [None, 8, 8, 3])
    y = tf.placeholder(tf.int64, [None])
    h = tf.reshape(Backbone()(x), [-1, 64 * 64])
    h = linear(h, 256, name="fc_1")
    logits = linear(h, 10, name="fc_2")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits))
    head = [v for v in tf.trainable_variables() if "fc_" in v.name]
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
    saver = tf.train.Saver()
    with tf.Session() as sess:
      saver.restore(sess, "pretrained.ckpt")
      for i in range(100):
        sess.run(train)
    """,
    "ops.py": """\
    import tensorflow as tf

    def conv(x, n, name="conv"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [3, 3, x.get_shape()[-1], n])
        return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

    def linear(x, n, name="linear"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [x.get_shape()[-1], n])
        return tf.matmul(x, w)
    """,
}

_H4 = {
    "model.py": """\
    import tensorflow as tf
    from tensorflow.contrib.slim.nets import resnet_v1
    from ops import linear

    x = tf.placeholder(tf.float32, [None, 224, 224, 3])
    y = tf.placeholder(tf.int64, [None])
    with tf.variable_scope("backbone"):
      feats, _ = resnet_v1.resnet_v1_50(x, is_training=False)
    h = tf.reshape(feats, [-1, 2048])
    h = linear(h, 256, name="fc_1")
    logits = linear(h, 10, name="fc_2")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits))
    head = [v for v in tf.trainable_variables() if "fc_" in v.name]
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
    saver = tf.train.Saver([v for v in tf.global_variables()
                            if "backbone" in v.name])
    with tf.Session() as sess:
      saver.restore(sess, "resnet_v1_50.ckpt")
      for i in range(100):
        sess.run(train)
    """,
    "ops.py": """\
    import tensorflow as tf

    def conv(x, n, name="conv"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [3, 3, x.get_shape()[-1], n])
        return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

    def linear(x, n, name="linear"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [x.get_shape()[-1], n])
        return tf.matmul(x, w)
    """,
}

_H5 = {
    "model.py": """\
    import tensorflow as tf
    from ops import linear

    x = tf.placeholder(tf.float32, [None, 50, 128])
    y = tf.placeholder(tf.int64, [None])
    cell = tf.nn.rnn_cell.LSTMCell(256)
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    h = linear(state.h, 256, name="fc_1")
    logits = linear(h, 10, name="fc_2")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits))
    head = [v for v in tf.trainable_variables() if "fc_" in v.name]
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
    saver = tf.train.Saver()
    with tf.Session() as sess:
      saver.restore(sess, "pretrained.ckpt")
      for i in range(100):
        sess.run(train)
    """,
    "ops.py": """\
    import tensorflow as tf

    def conv(x, n, name="conv"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [3, 3, x.get_shape()[-1], n])
        return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

    def linear(x, n, name="linear"):
      with tf.variable_scope(name):
        w = tf.get_variable("w", [x.get_shape()[-1], n])
        return tf.matmul(x, w)
    """,
}

HEADS = {
    # The backbone's layers are `ops.conv(...)`, an attribute call.
    "a backbone built by a module's helper": (_H1, 17),
    # `conv` is also defined in a second module.
    "a backbone helper defined twice": (_H2, 16),
    # The backbone is built by a method, `self._conv(...)`.
    "a backbone built by a method helper": (_H3, 21),
    # A slim ResNet under a root scope that names no layer.
    "a slim backbone under one root scope": (_H4, 14),
    # A pretrained LSTM, built under no scope.
    "an LSTM backbone": (_H5, 12),
}


@pytest.mark.parametrize("name", sorted(HEADS))
def test_a_head_over_a_backbone_no_helper_name_tells(name):
  files, line = HEADS[name]
  assert [(i, l) for i, _, l in scanned.in_project(files)
          if i == "var-list-filter"] == [("var-list-filter", line)]


# A head built under the scope the method opens, a body elsewhere.
_O1 = {
    "model.py": """\
    import tensorflow as tf
    from nets import backbone

    class Classifier(object):
      def build(self, n_classes, name, lr=0.01):
        self.X = tf.placeholder(tf.float32, [None, 32, 32, 3])
        self.Y = tf.placeholder(tf.float32, [None, n_classes])
        feats = backbone(self.X)
        with tf.variable_scope(name):
          logits = tf.layers.dense(feats, n_classes, name="fc")
        self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            logits=logits, labels=self.Y))
        var_list = [v for v in tf.trainable_variables()
                    if v.name.startswith(name)]
        self.train_op = tf.train.AdamOptimizer(lr).minimize(
            self.loss, var_list=var_list)
        self.saver = tf.train.Saver(tf.global_variables("resnet"))
    """,
    "nets.py": """\
    import tensorflow as tf

    def backbone(x):
      with tf.variable_scope("resnet"):
        h = tf.layers.conv2d(x, 64, 3, name="conv1")
        h = tf.layers.conv2d(h, 128, 3, name="conv2")
        return tf.reduce_mean(h, [1, 2])
    """,
}

_O2 = {
    "model.py": """\
    import tensorflow as tf

    class Classifier(object):
      def __init__(self):
        self.X = tf.placeholder(tf.float32, [None, 784])
        with tf.variable_scope("body"):
          self.h = tf.layers.dense(self.X, 256, name="embed")

      def build_head(self, n_classes, name, lr=0.01):
        self.Y = tf.placeholder(tf.float32, [None, n_classes])
        with tf.variable_scope(name):
          logits = tf.layers.dense(self.h, n_classes, name="fc")
        self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            logits=logits, labels=self.Y))
        var_list = [v for v in tf.trainable_variables()
                    if v.name.startswith(name)]
        self.train_op = tf.train.AdamOptimizer(lr).minimize(
            self.loss, var_list=var_list)
    """,
}

_O4 = {
    "model.py": """\
    import tensorflow as tf

    class Classifier(object):
      def build(self, n_classes, name, lr=0.01):
        self.X = tf.placeholder(tf.float32, [None, 784])
        self.Y = tf.placeholder(tf.float32, [None, n_classes])
        with tf.variable_scope(name_or_scope="body"):
          h = tf.layers.dense(self.X, 256, name="embed")
        with tf.variable_scope(name):
          logits = tf.layers.dense(h, n_classes, name="fc")
        self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            logits=logits, labels=self.Y))
        var_list = [v for v in tf.trainable_variables()
                    if v.name.startswith(name)]
        self.train_op = tf.train.AdamOptimizer(lr).minimize(
            self.loss, var_list=var_list)
    """,
}

_O5 = {
    "model.py": """\
    import tensorflow as tf

    class Classifier(object):
      def build(self, n_classes, name, lr=0.01):
        self.X = tf.placeholder(tf.float32, [None, 784])
        self.Y = tf.placeholder(tf.float32, [None, n_classes])
        h = tf.layers.dense(self.X, 256, name="embed")
        with tf.variable_scope(name):
          logits = tf.layers.dense(h, n_classes, name="fc")
        self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            logits=logits, labels=self.Y))
        var_list = [v for v in tf.trainable_variables()
                    if v.name.startswith(name)]
        self.train_op = tf.train.AdamOptimizer(lr).minimize(
            self.loss, var_list=var_list)
    """,
}

_O6 = {
    "model.py": """\
    import tensorflow as tf

    class Classifier(object):
      def build(self, n_classes, name, lr=0.01):
        self.X = tf.placeholder(tf.float32, [None, 784])
        self.Y = tf.placeholder(tf.float32, [None, n_classes])
        with tf.name_scope("body"):
          w = tf.Variable(tf.zeros([784, 256]), name="w")
          h = tf.matmul(self.X, w)
        with tf.variable_scope(name):
          logits = tf.layers.dense(h, n_classes, name="fc")
        self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            logits=logits, labels=self.Y))
        var_list = [v for v in tf.trainable_variables()
                    if v.name.startswith(name)]
        self.train_op = tf.train.AdamOptimizer(lr).minimize(
            self.loss, var_list=var_list)
    """,
}

OPENED = {
    # The body comes from another module's helper, outside the block.
    "a body built by another module's helper": (_O1, 13),
    # The body is built in `__init__`, under its own scope.
    "a body built in another method": (_O2, 15),
    # The body's scope is given by keyword.
    "a body's scope named by keyword": (_O4, 13),
    # The body is built outside any scope.
    "a body built outside any scope": (_O5, 12),
    # The body is a `tf.Variable` under a name scope.
    "a body made under a name scope": (_O6, 14),
}


@pytest.mark.parametrize("name", sorted(OPENED))
def test_a_head_in_the_opened_scope_beside_a_body_built_elsewhere(name):
  files, line = OPENED[name]
  assert [(i, l) for i, _, l in scanned.in_project(files)
          if i == "var-list-filter"] == [("var-list-filter", line)]


# New embedding rows trained beside a restored table, their norm clipped
# each epoch: a constraint, not a reset.
_R1 = """\
    import numpy as np
    import tensorflow as tf

    ids = tf.placeholder(tf.int32, [None, 20])
    labels = tf.placeholder(tf.int64, [None])
    with tf.variable_scope("lm"):
      old_rows = tf.get_variable("embedding", [30000, 128])
    new_rows = tf.Variable(tf.random_normal([100, 128]), name="new_rows")
    table = tf.concat([old_rows, new_rows], 0)
    model = TextClassifier()
    logits = model.classify(table, new_rows, ids)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    train = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=[new_rows])
    saver = tf.train.Saver([old_rows] + model.variables)
    with tf.Session() as sess:
      saver.restore(sess, "lm.ckpt")
      for epoch in range(10):
        sess.run(new_rows.assign(tf.clip_by_norm(new_rows, 1.0, axes=[1])))
        for batch in batches():
          sess.run(train, {ids: batch[0], labels: batch[1]})
    """

# DVBPR's search, its code set only when `epoch == 0`: set once.
_R3 = """\
    import numpy as np
    import tensorflow as tf

    with tf.variable_scope("DVBPR"):
      theta_u = tf.Variable(tf.random_uniform([100, 64]))
    saver = tf.train.Saver()
    saver.restore(sess, "dvbpr.ckpt")
    gan = DCGAN(sess)
    gan.load("checkpoint")
    x = np.random.normal(0, 0.5, size=[16, 256])
    z = tf.Variable(x, name="input_code", dtype=tf.float32)
    image = gan.get_gen(z, y)
    with tf.variable_scope("DVBPR", reuse=True):
      score = tf.matmul(CNN(image), tf.transpose(theta_u))
    obj = tf.reduce_mean(score) - tf.reduce_mean(tf.square(z))
    optimizer = tf.train.AdamOptimizer(0.05).minimize(-obj, var_list=[z])

    for epoch in range(6):
      x = np.random.normal(0, 0.5, size=[16, 256])
      if epoch == 0: sess.run(z.assign(x))
      for i in range(10):
        sess.run([score, optimizer])
    """

# The code reset each pass, but only TensorFlow's own functions run on it.
_LOOKED_UP = """\
    import numpy as np
    import tensorflow as tf

    ids = tf.placeholder(tf.int32, [None])
    with tf.variable_scope("model"):
      w = tf.get_variable("w", [64, 10])
    z = tf.Variable(tf.zeros([100, 64]), name="codes")
    rows = tf.nn.embedding_lookup(z, ids)
    tf.summary.histogram("z", z)
    loss = tf.reduce_mean(tf.square(tf.matmul(rows, w)))
    step = tf.train.AdamOptimizer(0.05).minimize(loss, var_list=[z])
    saver = tf.train.Saver([w])
    with tf.Session() as sess:
      saver.restore(sess, "model.ckpt")
      for epoch in range(6):
        sess.run(z.assign(np.zeros([100, 64])))
        for i in range(10):
          sess.run(step, {ids: np.arange(8)})
    """

RESETS = {
    "a max-norm clip of the rows each epoch": (_R1, 14),
    "a code set only on the first pass": (_R3, 16),
    "a code only TensorFlow's own functions run on": (_LOOKED_UP, 11),
}


@pytest.mark.parametrize("name", sorted(RESETS))
def test_a_list_not_reset_for_each_search(name):
  code, line = RESETS[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]


# A helper writing a kept copy, called on an untrainable variable
# directly and on the trained one through `partial` or `map`.
_PARTIAL = """\
    import functools
    import tensorflow as tf

    theta = tf.get_variable("theta", initializer=tf.random_uniform([2]))
    h = tf.get_variable("h", initializer=tf.random_uniform([2]),
                        trainable=False)
    loss = tf.reduce_sum(h * tf.square(theta))
    train_step = tf.train.AdamOptimizer(0.1).minimize(loss)

    def put_back(v, kept):
      return v.assign(tf.where(tf.range(2) < 1, kept, v))

    restore_h = put_back(h, h)
    restore_theta = functools.partial(put_back, theta)(h)
    with tf.Session() as sess:
      for step in range(50):
        sess.run(train_step)
        sess.run([restore_h, restore_theta])
    """

_MAPPED = """\
    import functools
    import tensorflow as tf

    theta = tf.get_variable("theta", initializer=tf.random_uniform([2]))
    h = tf.get_variable("h", initializer=tf.random_uniform([2]),
                        trainable=False)
    loss = tf.reduce_sum(h * tf.square(theta))
    train_step = tf.train.AdamOptimizer(0.1).minimize(loss)

    def put_back(v, kept):
      return v.assign(tf.where(tf.range(2) < 1, kept, v))

    restore_h = put_back(h, h)
    restore_theta = list(map(put_back, [theta], [h]))
    with tf.Session() as sess:
      for step in range(50):
        sess.run(train_step)
        sess.run([restore_h, restore_theta])
    """

PASSED = {
    "a helper also called through functools.partial": (_PARTIAL, 11),
    "a helper also called through map": (_MAPPED, 11),
}


@pytest.mark.parametrize("name", sorted(PASSED))
def test_a_helper_read_as_a_value_stays_a_write_back(name):
  code, line = PASSED[name]
  assert scanned.in_text(code, "write-back") == [("write-back", line)]
