"""`tfpartial scan`, mending part thirty-eight's two silences.

Both hid real partial freezes, and both were removed:

- gradients a method hands back beside its class's Keras `compile`: the
  method was taken as uncalled when its name was written nowhere else,
  so a call through a name built at run time (`getattr(obj, a + b)()`)
  or `__call__` applying them escaped, and any `.compile(...)` (a
  regular expression's too) counted as the Keras compile; its look-up
  grew with the square of the distinct method names;
- a `Saver` over the scope the step trains: its list was read from
  plain `=` bindings of the whole module, so a list grown by `+=` or
  `.extend` with another scope, or a function's parameter of the same
  name as a module-level list, read as the trained scope.

Each case below trains only some weights while another part stays
frozen: each is found.
"""

import pytest

import scanned

_LAYERS = """\
    import re
    import tensorflow as tf
    from tensorflow import keras


    class Head(object):

      def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 4])
        self.y = tf.placeholder(tf.float32, [None, 3])
        inp = keras.layers.Input((4,))
        self.model = keras.models.Model(inp, keras.layers.Dense(3)(
            keras.layers.Dense(6)(inp)))
        self.loss = tf.reduce_mean(tf.square(self.y - self.model(self.x)))
    {extra}

      def picked(self):
        return [v for v in self.model.trainable_weights if "bias" in v.name]

      def {method}(self):
        return tf.gradients(self.loss, self.picked())
    """

# A Keras compile in a method nothing runs.
_UNUSED_COMPILE = """\

      def warmup(self, xs, ys):
        self.model.compile(loss="mse", optimizer=keras.optimizers.SGD(0.1))
        self.model.fit(xs, ys)
"""

# The weights, too, are read through a name the code never writes out, so
# only the gradients the method hands back tie the step to its filter.
_BUILT_NAME = """\
    import tensorflow as tf
    from head import Head

    head = Head()
    part = "gr" + "ads"
    opt = tf.train.GradientDescentOptimizer(0.1)
    step = opt.apply_gradients(zip(getattr(head, part)(),
                                   getattr(head, "pic" + "ked")()))
    with tf.Session() as sess:
      for _ in range(10):
        sess.run(step)
    """

_ARG_NAME = """\
    import argparse
    import tensorflow as tf
    from head import Head

    parser = argparse.ArgumentParser()
    parser.add_argument("--fn", default="gr" "ads")
    args = parser.parse_args()
    head = Head()
    opt = tf.train.GradientDescentOptimizer(0.1)
    step = opt.apply_gradients(zip(getattr(head, args.fn)(),
                                   getattr(head, "pic" + "ked")()))
    with tf.Session() as sess:
      for _ in range(10):
        sess.run(step)
    """

_CALLED = """\
    import tensorflow as tf
    from head import Head

    head = Head()
    opt = tf.train.GradientDescentOptimizer(0.1)
    step = opt.apply_gradients(zip(head(), getattr(head, "pic" + "ked")()))
    with tf.Session() as sess:
      for _ in range(10):
        sess.run(step)
    """

_REGEX = """\

      def pattern(self):
        return re.compile("bias")
"""


def _head(method, extra):
  return _LAYERS.format(method=method, extra=extra)


HANDED_BACK = {
    "applied through a getattr of a built name": {
        "head.py": _head("grads", _UNUSED_COMPILE), "run.py": _BUILT_NAME},
    "applied through a getattr of an argparse default": {
        "head.py": _head("grads", _UNUSED_COMPILE), "run.py": _ARG_NAME},
    "applied through __call__": {
        "head.py": _head("__call__", _UNUSED_COMPILE), "run.py": _CALLED},
    "handed out by a class whose only compile is re.compile": {
        "head.py": _head("grads", _REGEX)},
}


@pytest.mark.parametrize("name", sorted(HANDED_BACK))
def test_handed_back_gradients_stay_found(name):
  assert [f for f in scanned.in_project(HANDED_BACK[name])
          if f[0] == "var-list-filter"] != []


_NETS = """\
    import tensorflow as tf


    def body(x):
      with tf.variable_scope("body"):
        return tf.layers.dense(x, 6, activation=tf.nn.tanh)


    def top(h):
      with tf.variable_scope("top"):
        return tf.layers.dense(h, 2)


    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.int32, [None])
    loss = tf.losses.sparse_softmax_cross_entropy(y, top(body(x)))
    trained = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="top")
    step = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, var_list=trained)
"""

_LOOP = """\
      for _ in range(10):
        sess.run(step)
"""

SAVERS = {
    "a list grown by += with another scope": _NETS + """\
    keep = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="top")
    keep += tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="body")
    loader = tf.train.Saver(var_list=keep)
    with tf.Session() as sess:
      loader.restore(sess, "ckpt/start")
""" + _LOOP,
    "a list grown by extend with another scope": _NETS + """\
    keep = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="top")
    keep.extend(tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="body"))
    loader = tf.train.Saver(var_list=keep)
    with tf.Session() as sess:
      loader.restore(sess, "ckpt/start")
""" + _LOOP,
    "a parameter named as a module-level list of the trained scope": _NETS
    + """\
    keep = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="top")
    writer = tf.train.Saver(var_list=keep)


    def load(sess, keep):
      loader = tf.train.Saver(var_list=keep)
      loader.restore(sess, "ckpt/body")


    with tf.Session() as sess:
      load(sess, tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                   scope="body"))
""" + _LOOP + """\
      writer.save(sess, "ckpt/top")
""",
    # The control: found on t61-fp38 too.
    "a saver over another scope": _NETS + """\
    keep = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="body")
    loader = tf.train.Saver(var_list=keep)
    with tf.Session() as sess:
      loader.restore(sess, "ckpt/start")
""" + _LOOP,
}


@pytest.mark.parametrize("name", sorted(SAVERS))
def test_a_restored_part_beside_a_filtered_step_stays_found(name):
  assert [f for f in scanned.in_project({"c.py": SAVERS[name]})
          if f[0] == "var-list-filter"] != []


def _methods(k):
  """One class compiling its model whole, with `k` methods of distinct
  names each handing back some of its weights' gradients."""
  methods = "".join(
      f"\n  def g{i}(self):\n"
      f"    return tf.gradients(self.loss, [v for v in self.model.weights"
      f" if 'k{i}' in v.name])\n" for i in range(k))
  return ("import tensorflow as tf\n"
          "from tensorflow import keras\n\n\n"
          "class Net(object):\n\n"
          "  def __init__(self):\n"
          "    self.model = keras.models.Sequential([keras.layers.Dense(2)])\n"
          "    self.loss = tf.reduce_sum(self.model(tf.ones([1, 2])))\n\n"
          "  def fit(self, xs, ys):\n"
          "    self.model.compile(loss='mse', optimizer='sgd')\n"
          "    self.model.fit(xs, ys)\n" + methods)


def test_distinct_handed_back_methods_cost_grows_linearly():
  # Four times the distinct method names, at most about four times the
  # work of the dropped-gradient checks.
  small = scanned.scan_work(_methods(10), "_runs/_dropped.py")
  large = scanned.scan_work(_methods(40), "_runs/_dropped.py")
  assert large <= 5 * small
