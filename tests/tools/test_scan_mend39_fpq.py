"""`tfpartial scan` after the review of t52-fpq (m39): the reviewer's
programs, each a real partial freeze that the branch silenced and main
before it (4097196) found, found again, at the same line.

Sections:
- straight-through cuts bound to a name (`_custom_gradients`): a mask
  read only through shape or range calls, and `tf.abs(w) > 0`, stay
  found (a1, a2);
- feed dicts (`_feed_dicts`): a dict of gradients with a key zeroed is
  no feed dict (d4);
- the canned-estimator scope (`_outer_scope`, since removed): a head scope beside a
  backbone built before it, in another `with`, at module level, on
  `self`, or passed in as a parameter, stays found (b1-b4);
- a copy network left out by name (the stopped-copy rule, removed):
  found (c2-c5), each an edit of `test_scan_fpq_triage`'s copy;
- cost: a class of many stopped copies and one filtered step costs
  about the same per part, however many there are.
"""

import textwrap

import pytest

import scanned
import test_scan_fpq_triage as fpq_triage

# a1: a mask bound to a name, read from the input only through `tf.shape`/`tf.range`: the first rows of an embedding fixed.
_A1 = """\
    import tensorflow as tf

    @tf.custom_gradient
    def first_rows_fixed(x):
      def grad(dy):
        mask = tf.cast(tf.range(tf.shape(x)[0]) >= 3, dy.dtype)[:, None]
        return dy * mask
      return tf.identity(x), grad

    emb = tf.Variable(tf.random.normal([10, 4]))
    loss = tf.reduce_sum(tf.nn.embedding_lookup(first_rows_fixed(emb), [1, 2, 5]))
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    """

# a2: a mask bound to a name, `tf.abs(w) > 0`: the pruned zeros fixed (the same elements as `w != 0`).
_A2 = """\
    import tensorflow as tf

    @tf.custom_gradient
    def keep_pruned(w):
      def grad(dy):
        mask = tf.cast(tf.abs(w) > 0, dy.dtype)
        return dy * mask
      return tf.identity(w), grad

    w = tf.Variable(tf.random.normal([10, 4]))
    loss = tf.reduce_sum(keep_pruned(w) ** 2)
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    """

# d4: a dict filled from `tape.gradient`, one key (chosen by argparse) zeroed: not a feed dict.
_D4 = """\
    import argparse
    import tensorflow as tf

    p = argparse.ArgumentParser()
    p.add_argument("--frozen", default="emb")
    args = p.parse_args()
    emb = tf.Variable(tf.random.normal([100, 8]))
    out = tf.Variable(tf.random.normal([8, 2]))
    opt = tf.keras.optimizers.Adam(1e-3)
    for step in range(10):
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.matmul(tf.gather(emb, [1, 2]), out))
      gs = tape.gradient(loss, [emb, out])
      g = {"emb": gs[0], "out": gs[1]}
      g[args.frozen] = 0
      opt.apply_gradients([(g["emb"], emb), (g["out"], out)])
    """

# The step of a head built in a canned-estimator scope and trained alone
# (b1-b4 end with it), at `indent` (a test's source before dedenting).
_HEAD_STEP = """
def _train_op_fn(loss):
  return OPTIMIZER.minimize(
      loss, var_list=tf.get_collection(
          tf.GraphKeys.TRAINABLE_VARIABLES, scope=absolute_scope))

loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
return _train_op_fn(loss)
"""


def _head_step(optimizer="optimizer", indent="      "):
  return textwrap.indent(_HEAD_STEP.replace("OPTIMIZER", optimizer), indent)


# b1: a module-level `hub.Module(...)` backbone called inside the canned scope.
_B1 = """\
    import tensorflow as tf
    import tensorflow_hub as hub

    backbone = hub.Module("https://tfhub.dev/google/imagenet/resnet_v2_50/feature_vector/3", trainable=True)

    def _model_fn(features, labels, mode, optimizer, parent_scope):
      with tf.variable_scope(parent_scope, values=(features["x"],)) as scope:
        absolute_scope = scope.name
        logits = tf.layers.dense(backbone(features["x"]), 2, name="logits")
""" + _head_step() + "    "

# b2: the `scope.name` bound in a head's `with`, beside a backbone's `with ... as scope` built from the parameters.
_B2 = """\
    import tensorflow as tf

    def _model_fn(features, labels, mode, optimizer):
      with tf.variable_scope("backbone") as scope:
        net = tf.layers.dense(features["x"], 64, name="trunk")
      with tf.variable_scope("head") as scope:
        absolute_scope = scope.name
        logits = tf.layers.dense(net, 2, name="logits")
""" + _head_step() + "    "

# b3: a `self.backbone` built in `__init__` called inside the canned scope.
_B3 = """\
    import tensorflow as tf

    class Net(object):
      def __init__(self):
        self.backbone = tf.keras.applications.ResNet50(include_top=False, weights="imagenet")

      def model_fn(self, features, labels, mode, params):
        with tf.variable_scope("head") as scope:
          absolute_scope = scope.name
          logits = tf.layers.dense(self.backbone(features["x"]), 2, name="logits")
""" + _head_step("tf.train.AdamOptimizer(1e-3)", "        ") + "    "

# b4: a helper taking a backbone's output as a parameter (`add_head(net, ...)`), the classic head trained alone.
_B4 = """\
    import tensorflow as tf

    def build_backbone(images):
      net = tf.layers.conv2d(images, 32, 3, name="conv1")
      return tf.reduce_mean(net, [1, 2])

    def add_head(net, labels, optimizer, head_name):
      with tf.variable_scope(head_name) as scope:
        absolute_scope = scope.name
        logits = tf.layers.dense(net, 2, name="logits")
""" + _head_step() + """
    def model_fn(features, labels, mode):
      net = build_backbone(features["image"])
      return add_head(net, labels, tf.train.AdamOptimizer(1e-3), "head")
    """


def _copy(*edits):
  """The stopped copy left out by name (`fpq_triage._TEACHER`, its target
  stopped) with `edits`, pairs of (text, replacement), each applied once."""
  code = fpq_triage._teacher("target = tf.stop_gradient(target)")
  for old, replacement in edits:
    assert code.count(old) == 1, old
    code = code.replace(old, replacement)
  return code


# c2: a filter word ('dense') that an unnamed trained layer's automatic name holds.
_C2 = _copy(("Encoder(name='encoder_frozen')", "Encoder(name='dense_teacher')"),
            ("Dense(8, name='head')", "Dense(8)"),
            ("'frozen' not in", "'dense' not in"))

# c3: a trained part of another class named with the filter's word.
_C3 = _copy(("self.dense = tf.keras.layers.Dense(8)\n",
             'self.dense = tf.keras.layers.Dense(8, name="proj_frozen")\n'))

# c4: an `add_weight` with the filter's word as a positional name, in the loss.
_C4 = _copy(("name='head')\n", "name='head')\n"
             "        self.scale = self.add_weight('scale_frozen', shape=(8,))\n"),
            ("(self.head(h) - target)", "(self.scale * self.head(h) - target)"))

# c5: the stopped copy read unstopped outside its class, in the step.
_C5 = _copy(("loss = m((x, ref))",
             "loss = m((x, ref)) + tf.reduce_mean(m.encoder_frozen(x)[0])"))


@pytest.mark.parametrize("code,found", [
    (_A1, [("grads-mask", 7)]),
    (_A2, [("grads-mask", 7)]),
    (_D4, [("grads-mask", 15)]),
    (_B1, [("var-list-filter", 13)]),
    (_B2, [("var-list-filter", 12)]),
    (_B3, [("var-list-filter", 14)]),
    (_B4, [("var-list-filter", 14)]),
    (_C2, [("var-list-filter", 28)]),
    (_C3, [("var-list-filter", 28)]),
    (_C4, [("var-list-filter", 29)]),
    (_C5, [("var-list-filter", 28)]),
], ids=["a1", "a2", "d4", "b1", "b2", "b3", "b4", "c2", "c3", "c4", "c5"])
def test_a_real_partial_freeze_of_the_review_is_found(code, found):
  assert scanned.found(code) == found


def _stopped_copies(n):
  """One module: a model of `n` copies named `t<i>_frozen`, each output
  stopped, a head, and one step leaving out `'frozen'` (the reviewer's
  cost input)."""
  made = "".join(f"    self.t{i}_frozen = Encoder(name='t{i}_frozen')\n"
                 for i in range(n))
  calls = "".join(f"    f{i}, _ = self.t{i}_frozen(ref)\n"
                  f"    f{i} = tf.stop_gradient(f{i})\n" for i in range(n))
  return ("import tensorflow as tf\n\n"
          "class Encoder(tf.keras.layers.Layer):\n"
          "  def build(self, shape):\n"
          "    self.dense = tf.keras.layers.Dense(8)\n"
          "  def call(self, x):\n    return self.dense(x), x\n\n"
          "class Model(tf.keras.Model):\n  def build(self, shape):\n" + made +
          "    self.head = tf.keras.layers.Dense(8, name='head')\n"
          "  def call(self, inputs):\n    x, ref = inputs\n" + calls +
          "    return tf.reduce_mean(self.head(x) - f0)\n\n"
          "m = Model()\nopt = tf.keras.optimizers.Adam(1e-3)\n\n"
          "@tf.function\ndef run_step(x, ref):\n"
          "  with tf.GradientTape() as tape:\n    loss = m((x, ref))\n"
          "  train_weights = [e for e in m.trainable_weights "
          "if 'frozen' not in e.name]\n"
          "  grads = tape.gradient(loss, train_weights)\n"
          "  opt.apply_gradients(zip(grads, train_weights))\n")


def test_a_class_of_many_stopped_copies_grows_linearly():
  n = 25
  small, large = (scanned.scan_work(_stopped_copies(k)) for k in (n, 4 * n))
  assert large <= 6 * small, (small, large)
