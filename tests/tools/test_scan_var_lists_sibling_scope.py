"""`tfpartial scan`'s `var-list-filter` for a head trained beside a
backbone built in a sibling scope (part twenty-seven's raytroop YOLOv3:
`with tf.variable_scope("Feature_Extractor"):` builds Darknet-53, the
next `with tf.variable_scope("Head"):` reads its features, and the step
trains only the trainable variables of scope `Head`). Both scopes are
opened outside any other, so each alone looks like a whole model; the
head reading what the sibling built makes it a part. Silent: a GAN's or
an actor-critic's halves (each has its own step), a filter keeping both
scopes, a Saver's `var_list`, and a sibling the kept scope never reads.
Each source is synthetic."""

import scanned

_MODEL = """\
    import tensorflow as tf
    from backbone import Darknet

    class Detector:
      def __init__(self, images):
        with tf.variable_scope("Feature_Extractor"):
          extractor = Darknet("darknet.npz")
          self.feats = extractor.build(images)
        with tf.variable_scope("Head"):
          self.out = tf.layers.conv2d(extractor.route, 255, 1)
    """

_BACKBONE = """\
    import numpy as np
    import tensorflow as tf

    class Darknet:
      def __init__(self, path):
        self.data = np.load(path)

      def build(self, x):
        w = tf.Variable(self.data["conv0"], name="w")
        self.route = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
        return self.route
    """

_TRAIN = """\
    import tensorflow as tf
    from model import Detector

    model = Detector(images)
    loss = tf.reduce_mean(model.out)
    head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="Head")
    %s
    """


def _found(train, model=_MODEL):
  return [(i, p, l) for i, p, l in scanned.in_project(
      {"model.py": model, "backbone.py": _BACKBONE, "train.py": train})]


def test_a_head_scope_reading_a_sibling_backbone_is_found():
  train = _TRAIN % "op = tf.train.AdamOptimizer().minimize(loss, var_list=head)"
  assert _found(train) == [("var-list-filter", "train.py", 6)]


def test_functions_built_in_sibling_scopes_in_one_file_are_found():
  code = """\
      import tensorflow as tf

      def backbone(x):
        w = tf.get_variable("w", [3, 3, 3, 64])
        return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

      def build(images):
        with tf.variable_scope("encoder"):
          feats = backbone(images)
        with tf.variable_scope("classifier"):
          logits = tf.layers.dense(feats, 10)
        return logits

      loss = tf.reduce_mean(build(images))
      tvars = [v for v in tf.trainable_variables()
               if v.name.startswith("classifier")]
      op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=tvars)
      """
  assert scanned.found(code) == [("var-list-filter", 15)]


def test_a_saver_of_the_head_scope_is_silent():
  assert _found(_TRAIN % "saver = tf.train.Saver(var_list=head)\n"
                "    op = tf.train.AdamOptimizer().minimize(loss)") == []


def test_a_filter_keeping_both_sibling_scopes_is_silent():
  train = (_TRAIN % "op = tf.train.AdamOptimizer().minimize(loss, "
           "var_list=both)").replace(
               'scope="Head")', 'scope="Head")\n    both = head + '
               'tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, '
               'scope="Feature_Extractor")')
  assert _found(train) == []


def test_a_sibling_the_kept_scope_never_reads_is_silent():
  model = _MODEL.replace("extractor.route", "images")
  train = _TRAIN % "op = tf.train.AdamOptimizer().minimize(loss, var_list=head)"
  assert _found(train, model) == []


_HALVES = """\
    import tensorflow as tf

    def net(x, units):
      w = tf.get_variable("w", [4, units])
      return tf.matmul(x, w)

    def build(x):
      with tf.variable_scope("%s"):
        first = net(x, 4)
      with tf.variable_scope("%s"):
        second = net(first, 1)
      return first, second

    first, second = build(x)
    a_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "%s")
    b_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "%s")
    opt = tf.train.AdamOptimizer(1e-4)
    a_op = opt.minimize(-tf.reduce_mean(second), var_list=a_vars)
    b_op = opt.minimize(tf.reduce_mean(second ** 2), var_list=b_vars)
    """


def test_a_gan_whose_halves_each_have_a_step_is_silent():
  names = ("generator", "discriminator") * 2
  assert scanned.found(_HALVES % names) == []


def test_an_actor_critic_whose_halves_each_have_a_step_is_silent():
  names = ("actor", "critic") * 2
  assert scanned.found(_HALVES % names) == []
