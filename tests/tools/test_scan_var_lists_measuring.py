"""`tfpartial scan`'s `var-list-filter` beside a network that only
measures the model: the loss compares what one network of the project,
run in inference mode inside its function (`is_training=False`), makes
of the data and of the model's rendering (a face-recognition network's
identity features, as in part sixteen's Deep3DFaceReconstruction): the
filter leaving it out is silent. The same frozen network run on two
inputs of data, a head trained on its features, is still found. Each
source is synthetic."""

import pytest

import scanned


def _found(files):
  return [(path, idiom, line)
          for idiom, path, line in scanned.in_project(files)]


_NETWORKS = """\
    import tensorflow as tf

    def regressor(images, is_training=True):
      with tf.variable_scope('resnet'):
        net = tf.layers.dense(images, 64)
      return tf.layers.dense(net, 16, name='fc-coeff')

    def identity_net(images):
      return backbone(images, is_training=False)

    def backbone(images, is_training=True):
      with tf.variable_scope('Backbone'):
        return tf.layers.dense(images, 8)
    """

_MODEL = """\
    import tensorflow as tf
    import networks

    class Model:
      def __init__(self, iterator, renderer):
        self.images, self.labels = iterator.get_next()
        self.renderer = renderer
        self.optimizer = tf.train.AdamOptimizer(1e-4)

      def forward(self):
        self.coeff = networks.regressor(self.images)
        self.rendered = self.renderer.render(self.coeff)
        self.feat_a = networks.identity_net(self.images)
        self.feat_b = networks.identity_net(%s)
        self.loss = tf.reduce_mean(tf.square(self.feat_a - self.feat_b))

      def backward(self):
        update = [v for v in tf.trainable_variables()
                  if 'resnet' in v.name or 'fc-' in v.name]
        grads = tf.gradients(self.loss, update)
        self.train_op = self.optimizer.apply_gradients(zip(grads, update))
    """


def _project(other):
  return {"networks.py": _NETWORKS, "model.py": _MODEL % other}


def test_a_network_measuring_the_rendering_is_silent():
  assert _found(_project("self.rendered")) == []


def test_the_same_network_on_two_inputs_of_data_is_found():
  assert _found(_project("self.labels")) == [
      ("model.py", "var-list-filter", 18)]


def test_a_filter_leaving_out_more_than_the_measuring_network_is_found():
  # `resnet`, the regressor's body, is left out beside the identity
  # network: the measure excuses only its own scope.
  project = _project("self.rendered")
  project["model.py"] = project["model.py"].replace(
      "if 'resnet' in v.name or 'fc-' in v.name", "if 'fc-' in v.name")
  assert _found(project) == [("model.py", "var-list-filter", 18)]
