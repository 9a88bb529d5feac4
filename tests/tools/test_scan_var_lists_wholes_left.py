"""`tfpartial scan`'s `var-list-filter` silent where a filter keeps every
variable the step could train, read from what the code does (part 31's
negatives): a head built on a graph imported from a frozen `.pb`
(constants, no variables) under the names the filter keeps; a model
built under the one scope a helper opens, beside a step counter, a
normalisation helper called under a layer's scope, inputs made by a
placeholder helper, and a `Saver` that warm-starts the very filter the
step trains. Their twins keep the finding: a backbone imported with its
variables (`import_meta_graph`), a head layer left out of the names, a
trained scalar made outside the model's scope, a `Saver` restoring
another part."""

import pytest
import scanned


_in_project = scanned.in_project


_BASE = """\
    import tensorflow as tf

    class Classifier(object):
      def __init__(self, model):
        self.model = model
        self.logits = None

      def set_trainable(self, names):
        self.var_list = [v for v in tf.trainable_variables()
                         if v.name.split('/')[0] in names]

      def define_training(self):
        self.cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            logits=self.logits, labels=self.y))
        self.train_op = tf.train.AdamOptimizer(1e-3).minimize(
            self.cost, var_list=self.var_list)
    """

_FROZEN_PB = """\
    import tensorflow as tf

    class Loaded(object):
      def __init__(self, path):
        with tf.gfile.GFile(path, 'rb') as f:
          graph_def = tf.GraphDef()
          graph_def.ParseFromString(f.read())
          self.sess = tf.Session()
          tf.import_graph_def(graph_def, name="")

      def graph(self):
        return self.sess.graph
    """

_META_GRAPH = """\
    import tensorflow as tf

    class Loaded(object):
      def __init__(self, path):
        self.sess = tf.Session()
        saver = tf.train.import_meta_graph(path + ".meta")
        saver.restore(self.sess, path)
        tf.import_graph_def(tf.GraphDef(), name="unused")

      def graph(self):
        return self.sess.graph
    """

_HEAD = """\
    import tensorflow as tf
    from base import Classifier

    class Head(Classifier):
      def __init__(self, model, n):
        Classifier.__init__(self, model)
        self.y = tf.placeholder(tf.float32, [None, n])
        features = model.graph().get_tensor_by_name("pool:0")
        names = ["fc_new"]
        self.logits = tf.layers.dense(features, n, name=names[0])
        self.set_trainable(names)
        self.define_training()
    """

_TWO_LAYER_HEAD = """\
    import tensorflow as tf
    from base import Classifier

    class Head(Classifier):
      def __init__(self, model, n):
        Classifier.__init__(self, model)
        self.y = tf.placeholder(tf.float32, [None, n])
        features = model.graph().get_tensor_by_name("pool:0")
        names = ["fc_new"]
        hidden = tf.layers.dense(features, 256, name="fc_adapt")
        self.logits = tf.layers.dense(hidden, n, name=names[0])
        self.set_trainable(names)
        self.define_training()
    """

# The tool that froze the `.pb` loads the checkpoint and writes the graph;
# it trains nothing.
_FREEZE_TOOL = """\
    import tensorflow as tf

    def main(meta, checkpoint):
      with tf.Session() as sess:
        saver = tf.train.import_meta_graph(meta)
        saver.restore(sess, checkpoint)
        tf.train.write_graph(sess.graph.as_graph_def(), ".", "model.pb")

    if __name__ == "__main__":
      main("model.meta", "model.ckpt")
    """

_GEN = """\
    import tensorflow as tf

    def placeholder_inputs(batch_size, num_point, up_ratio=4):
      points = tf.placeholder(tf.float32, shape=(batch_size, num_point, 3))
      gt = tf.placeholder(tf.float32, shape=(batch_size, num_point * up_ratio, 3))
      return points, gt

    def instance_norm(net):
      shift = tf.get_variable('shift', shape=[net.get_shape()[-1]])
      scale = tf.get_variable('scale', shape=[net.get_shape()[-1]])
      return scale * net + shift

    def layer(x, n, scope):
      with tf.variable_scope(scope):
        return instance_norm(tf.layers.dense(x, n))

    def get_gen_model(point_cloud, is_training, scope, up_ratio=4, reuse=None):
      with tf.variable_scope(scope, reuse=reuse):
        h = layer(point_cloud, 64, 'layer1')
        h = layer(h, 128, 'up_layer')
        out = tf.layers.dense(h, 3 * up_ratio, name='out')
      return tf.reshape(out, [-1, 4096, 3]), None
    """


def _main(counter, saver):
  return f"""\
    import argparse
    import tensorflow as tf
    import model_gen as MODEL_GEN

    parser = argparse.ArgumentParser()
    parser.add_argument('--up_ratio', type=int, default=4)
    FLAGS = parser.parse_args()
    UP_RATIO = FLAGS.up_ratio

    def train(assign_model_path=None):
      {counter}
      points, gt = MODEL_GEN.placeholder_inputs(28, 1024, UP_RATIO)
      pred, _ = MODEL_GEN.get_gen_model(points, True, scope='generator',
                                        up_ratio=UP_RATIO)
      loss = tf.reduce_mean((pred - gt) ** 2)
      gen_tvars = [var for var in tf.trainable_variables()
                   if var.name.startswith("generator")]
      train_op = tf.train.AdamOptimizer(1e-3).minimize(
          loss, var_list=gen_tvars, global_step=step)
      with tf.Session() as sess:
        if assign_model_path is not None:
          assign_saver = tf.train.Saver(var_list={saver})
          assign_saver.restore(sess, assign_model_path)
        sess.run(train_op)
    """


_OWN_FILTER = ("[var for var in tf.trainable_variables() "
               "if var.name.startswith('generator')]")
_OTHER_PART = ("[var for var in tf.trainable_variables() "
               "if var.name.startswith('encoder')]")

SILENT = {
    # SlipknotTN: MobileNet's classifier over a frozen `.pb`, the helper
    # keeping the layer the subclass builds; a tool froze the `.pb`.
    "a head on a frozen .pb, the filter keeping its layers": {
        "base.py": _BASE, "loader.py": _FROZEN_PB, "head.py": _HEAD,
        "tools/freeze.py": _FREEZE_TOOL},
    # PU-Net: the generator built under the one scope its helper opens;
    # a step counter outside it; `instance_norm` called under a scope;
    # the pretrained generator restored by the same filter.
    "a model's scope beside a step counter and a warm start of it": {
        "main.py": _main("step = tf.Variable(0, trainable=False)",
                         _OWN_FILTER),
        "model_gen.py": _GEN},
}

FOUND = {
    # The backbone loaded with its variables: the head trains alone.
    "a head on a meta graph loaded with its variables": ({
        "base.py": _BASE, "loader.py": _META_GRAPH, "head.py": _HEAD},
        [("var-list-filter", "base.py", 9)]),
    # A layer of the head left out of the names: it stays fixed.
    "a head layer the names leave out": ({
        "base.py": _BASE, "loader.py": _FROZEN_PB,
        "head.py": _TWO_LAYER_HEAD},
        [("var-list-filter", "base.py", 9)]),
    # A trained scalar made outside the generator's scope.
    "a trained variable outside the model's scope": ({
        "main.py": _main("step = tf.Variable(0.0)", _OWN_FILTER),
        "model_gen.py": _GEN},
        [("var-list-filter", "main.py", 16)]),
    # The normalisation helper also called outside any scope: its
    # variables are no part of the generator.
    "a helper's variables made outside the model's scope": ({
        "main.py": _main("step = tf.Variable(0, trainable=False)",
                         _OWN_FILTER).replace(
            "loss = tf.reduce_mean(",
            "pred = MODEL_GEN.instance_norm(pred)\n"
            "      loss = tf.reduce_mean("),
        "model_gen.py": _GEN},
        [("var-list-filter", "main.py", 17)]),
    # The inputs made by a helper that builds a layer: a part built
    # outside the generator's scope feeds it.
    "inputs from a helper building a layer": ({
        "main.py": _main("step = tf.Variable(0, trainable=False)",
                         _OWN_FILTER),
        "model_gen.py": _GEN.replace(
            "return points, gt",
            "return tf.layers.dense(points, 3), gt")},
        [("var-list-filter", "main.py", 16)]),
    # Another part restored from a checkpoint: trained in front of it.
    "a saver restoring another part": ({
        "main.py": _main("step = tf.Variable(0, trainable=False)",
                         _OTHER_PART),
        "model_gen.py": _GEN},
        [("var-list-filter", "main.py", 16)]),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_filter_keeping_every_variable_is_silent(name):
  assert _in_project(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_its_twins_that_leave_variables_out_are_found(name):
  files, expected = FOUND[name]
  assert _in_project(files) == expected
