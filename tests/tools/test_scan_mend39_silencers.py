"""`tfpartial scan` after the second review of the m39 mends (m39-r2):
real partial freezes that this round's silencers hid are found again.

Sections:
- a padding row replaced by zeros (`_idle_project`, removed): found in
  a project whose every step the scan reads as gated off, and beside an
  Estimator head that trains it (deep_lip_reading, reduced; i1);
- straight-through cuts (`_custom_gradients`): a range test with a tiny
  bound (`tf.abs(w) < 1e-8`, `<= epsilon()`, `-1e-8 < w < 1e-8`) is a
  float-safe `w == 0`, so the mask stays found (g1, g2);
- feed dicts (`_feed_dicts`): a dict keyed by a model's variables and
  filled from a helper's gradients is gradients, not a feed dict (f1);
  a dict fed to a run, or keyed by placeholders, stays silent;
- the canned-estimator scope (`_outer_scope`, since removed): a backbone handed in by
  `params`, by a closure's parameter, or written into `features` before
  the head's scope keeps the step found (o1-o3);
- cost: a function of many zeros written into a feed dict, and many
  feed dicts each given a zero, cost about the same per write.
"""

import textwrap

import pytest

import scanned
import test_scan_mend39_left as left

# The lip project as the scan reads it: the embedding's padding row,
# every step under `if training:` of a class built with `training=False`.
_PADDING = [("stop-gradient-mix", "modules.py", 9)]

# i1: an Estimator head (`create_estimator_spec(optimizer=...)`) trains
# the table; no `minimize` or `apply_gradients` in sight.
_HEAD = """\
    import tensorflow as tf
    from modules import embedding

    def model_fn(features, labels, mode, params):
      x = embedding(features["ids"], 40, 64, zero_pad=True)
      logits = tf.compat.v1.layers.dense(tf.reduce_mean(x, 1), 1)
      head = tf.estimator.BinaryClassHead()
      return head.create_estimator_spec(
          features=features, mode=mode, logits=logits, labels=labels,
          optimizer=tf.keras.optimizers.Adagrad(0.05))

    def main(_):
      est = tf.estimator.Estimator(model_fn, model_dir="/tmp/m")
      tf.estimator.train_and_evaluate(
          est, tf.estimator.TrainSpec(input_fn, max_steps=1000),
          tf.estimator.EvalSpec(input_fn))

    if __name__ == "__main__":
      tf.compat.v1.app.run(main)
    """

# A step every visible call turns off: a flag the scan cannot prove.
_CALLED_OFF = """\
    import tensorflow as tf
    from graph import TransformerGraph

    def evaluate(do_train=True):
      g = TransformerGraph(x, y)
      if do_train:
        tf.train.AdamOptimizer(0.1).minimize(tf.reduce_mean(g.logits))

    evaluate(do_train=False)
    """


@pytest.mark.parametrize("changed", [{}, {"train_est.py": _HEAD},
                                     {"train.py": _CALLED_OFF}],
                         ids=["idle", "estimator_head", "called_off"])
def test_a_padding_row_is_found_whatever_gates_the_steps(changed):
  assert left._lip(**changed) == _PADDING


def _cut(test, head=""):
  """A pruned Dense layer whose kernel's gradient is cut where `test`
  holds (after a `head` line of setup)."""
  return f"""\
    import tensorflow as tf
    {head}
    @tf.custom_gradient
    def train_pruned_only(w):
      def grad(dy):
        free = tf.cast({test}, dy.dtype)
        return dy * free
      return tf.identity(w), grad

    class Dense(tf.keras.layers.Layer):
      def build(self, shape):
        self.kernel = self.add_weight("kernel", [shape[-1], 8])

      def call(self, x):
        return tf.matmul(x, train_pruned_only(self.kernel))
    """


@pytest.mark.parametrize("test", [
    "tf.abs(w) < 1e-8",  # g1: PackNet, only the freed weights train.
    "tf.abs(w) <= tf.keras.backend.epsilon()",  # g2
    "-1e-8 < w < 1e-8",  # The chain form.
    "tf.less(tf.abs(w), 1e-6)",
])
def test_a_range_test_with_a_tiny_bound_is_a_zero_test(test):
  assert scanned.found(_cut(test)) == [("grads-mask", 7)]


@pytest.mark.parametrize("test", ["tf.abs(w) <= 1.0", "-1 < w < 1"])
def test_a_straight_through_cut_stays_silent(test):
  assert scanned.found(_cut(test)) == []


# f1: TF2 eager, no Session: gradients from a method, kept by variable.
_F1 = """\
    import tensorflow as tf

    class Model(tf.Module):
      def __init__(self):
        self.emb = tf.Variable(tf.random.normal([100, 8]))
        self.out = tf.Variable(tf.random.normal([8, 2]))

      def grads(self, ids):
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(tf.matmul(tf.gather(self.emb, ids), self.out))
        return tape.gradient(loss, [self.emb, self.out])

    model = Model()
    opt = tf.keras.optimizers.Adam(1e-3)
    for step in range(10):
      gs = model.grads([1, 2])
      g = {model.emb: gs[0], model.out: gs[1]}
      g[model.emb] = 0
      opt.apply_gradients([(g[model.emb], model.emb), (g[model.out], model.out)])
    """


def test_gradients_kept_by_variable_are_no_feed_dict():
  assert scanned.found(_F1) == [("grads-mask", 18)]


_FEEDS = """\
    import tensorflow as tf

    class Model:
      def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 4])
        self.keep = tf.placeholder(tf.float32, [])
        w = tf.get_variable("w", [4, 2])
        self.loss = tf.reduce_sum(tf.nn.dropout(self.x, self.keep) @ w)
        self.train_op = tf.train.AdamOptimizer(0.1).minimize(self.loss)

    def make_feed(model, xs):
      feed = {model.x: xs, model.keep: 0.5}
      feed[model.keep] = 0
      return feed

    def step(sess, model, xs):
      feed = {model.x: xs}
      feed[model.keep] = 0
      sess.run(model.train_op, feed_dict=feed)
    """


def test_a_feed_dict_fed_or_keyed_by_placeholders_stays_silent():
  assert scanned.found(_FEEDS) == []


# A head built in a canned-estimator scope and trained alone: `logits`
# (lines, the last binding `logits`) written inside the scope.
_HEAD_SCOPE = """\
with tf.variable_scope("head", values=tuple(features.values())) as scope:
  absolute_scope = scope.name
  LOGITS

def _train_op_fn(loss):
  return tf.train.AdamOptimizer(1e-3).minimize(
      loss, var_list=tf.get_collection(
          tf.GraphKeys.TRAINABLE_VARIABLES, scope=absolute_scope),
      global_step=tf.train.get_global_step())

loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
return tf.estimator.EstimatorSpec(mode, loss=loss,
                                  train_op=_train_op_fn(loss))
"""


def head_scope(*logits, indent="      "):
  """The body of a `model_fn` that trains only its head's scope, at
  `indent` (a test's source before dedenting)."""
  return textwrap.indent(
      _HEAD_SCOPE.replace("LOGITS", "\n  ".join(logits)), indent)


# o1: the backbone handed in by `params` (a hub module, trainable).
_O1 = """\
    import tensorflow as tf
    import tensorflow_hub as hub

    def model_fn(features, labels, mode, params):
""" + head_scope('net = params["backbone"](features["image"])',
                 'logits = tf.layers.dense(net, params["n_classes"])') + """
    def main(_):
      backbone = hub.Module(URL, trainable=True)
      est = tf.estimator.Estimator(
          model_fn, params={"backbone": backbone, "n_classes": 10})
      est.train(input_fn)
    """

# o2: the backbone a closure's parameter.
_O2 = """\
    import tensorflow as tf
    import tensorflow_hub as hub

    def make_model_fn(backbone):
      def model_fn(features, labels, mode):
""" + head_scope('logits = tf.layers.dense(backbone(features["image"]), 10)',
                 indent="        ") + """\
      return model_fn

    est = tf.estimator.Estimator(make_model_fn(hub.Module(URL, trainable=True)))
    est.train(input_fn)
    """

# o3: a trunk written into `features` before the head's scope.
_O3 = """\
    import tensorflow as tf

    def model_fn(features, labels, mode):
      features["net"] = tf.layers.dense(features["image"], 64, name="trunk")
""" + head_scope('logits = tf.layers.dense(features["net"], 10)') + "    "


@pytest.mark.parametrize("code, line", [(_O1, 12), (_O2, 12), (_O3, 11)],
                         ids=["o1_params", "o2_closure", "o3_written"])
def test_a_backbone_reaching_the_head_scope_keeps_the_step_found(code, line):
  assert scanned.found(code) == [("var-list-filter", line)]


def _zeros_into_one_feed(n):
  """One function: a feed dict given `n` zeros, one key each."""
  return ("import tensorflow as tf\n" + "".join(
      f"p{i} = tf.placeholder(tf.float32, [])\n" for i in range(n)) +
          "w = tf.get_variable('w', [4])\n"
          "train_op = tf.train.AdamOptimizer(0.1).minimize("
          "tf.reduce_sum(w))\n"
          "def step(sess, xs):\n  feed = {p0: xs[0]}\n" + "".join(
              f"  feed[p{i}] = 0\n" for i in range(n)) +
          "  return sess.run(train_op, feed_dict=feed)\n")


def _feeds_of_one_function(n):
  """One function: `n` feed dicts, each given a zero and fed."""
  return ("import tensorflow as tf\nw = tf.get_variable('w', [4])\n"
          "ph = tf.placeholder(tf.float32, [None])\n"
          "train_op = tf.train.AdamOptimizer(0.1).minimize("
          "tf.reduce_sum(w))\ndef step(sess, xs):\n" + "".join(
              f"  feed{i} = {{ph: xs}}\n  feed{i}[ph] = 0\n"
              f"  sess.run(train_op, feed_dict=feed{i})\n"
              for i in range(n)))


@pytest.mark.parametrize("make", [_zeros_into_one_feed,
                                  _feeds_of_one_function])
def test_feed_dicts_cost_the_same_per_write(make):
  # Was quadratic: each zero written walked the whole function for runs
  # (x12.5 and x15.3 in `_feed_dicts` for 4 times the writes, 32762c6).
  assert scanned.found(make(10)) == []
  small, large = (scanned.scan_work(make(n), "_feed_dicts.py")
                  for n in (50, 200))
  assert large <= 6 * small, (small, large)
