"""`tfpartial scan` (var-list-filter): a model class's own list read
whole. The base class collects `{v.name: v for v in t_vars if self.name
in v.name}` (`t_vars = tf.trainable_variables()`), a subclass written
inside the training function opens `tf.variable_scope(self.name)` around
all it builds, and the step trains `[d[k] for k in d.keys()]`: the whole
model, nothing left out (tdeboissiere/DeepLearningImplementations,
ScatteringTransform). Twins that stay findings: the subclass builds a
pretrained backbone outside its own scope; the list keeps one layer by
name."""

import scanned

_MODELS = """\
    import tensorflow as tf


    class Model(object):
      def __init__(self, name):
        self.name = name

      def get_trainable_variables(self):
        t_vars = tf.trainable_variables()
        t_vars_model = {v.name: v for v in t_vars if self.name in v.name}
        return t_vars_model
    """


def _train(built, kept="dict_vars[k] for k in dict_vars.keys()"):
  return f"""\
    import tensorflow as tf
    import models


    def train_model():
      x = tf.placeholder(tf.float32, [None, 784])

      class HybridCNN(models.Model):
        def __call__(self, x, reuse=False):
          {built}
          with tf.variable_scope(self.name):
            x = tf.layers.dense(x, 512, name="dense1")
            return tf.layers.dense(x, 10, name="dense2")

      net = HybridCNN("HCNN")
      loss = tf.reduce_mean(net(x))
      opt = tf.train.AdamOptimizer(1e-3)
      dict_vars = net.get_trainable_variables()
      all_vars = [{kept}]
      gradvar = opt.compute_gradients(loss, var_list=all_vars)
      update = opt.apply_gradients(gradvar)
    """


def _found(train):
  return scanned.in_project({"models.py": _MODELS, "train.py": train})


def test_a_models_own_list_read_whole_is_silent():
  assert _found(_train("pass")) == []


def test_a_backbone_built_outside_the_models_scope_is_left_out():
  train = _train('x = tf.layers.dense(x, 784, name="vgg", trainable=True)')
  assert _found(train) == [("var-list-filter", "train.py", 19)]


def test_one_layer_kept_by_name_is_a_part():
  train = _train("pass", "v for v in tf.trainable_variables() "
                 "if 'dense2' in v.name")
  assert _found(train) == [("var-list-filter", "train.py", 19)]
