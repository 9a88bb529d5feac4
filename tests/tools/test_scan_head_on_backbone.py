"""`tfpartial scan`'s `var-list-filter` for a head trained on a pretrained
backbone built beside it (part twenty-seven's misses: YuSak1's nsketch
transfer and svecon's subcaltech ResNet build a slim net, restore it
and train only the head's scope; khushbujpatel's AlexNet trains
`var_list=[weight8, bias8]` on top of `self.model(...)` built from
loaded arrays; shmueldo's progressive network trains only the new
column's variables on the old columns' outputs). Silent: a GAN's and an
actor-critic's halves (each has its own step), a backbone set
untrainable, a teacher or target network whose output only meets the
trained model's in the loss, a step over every variable, and a graph only
evaluated. Each source is synthetic."""

import pytest

import scanned

_SLIM = """\
    import tensorflow as tf
    import nets.nasnet.nasnet

    class Network:
      def construct(self, images, labels, path):
        with self.session.graph.as_default():
          with tf.contrib.slim.arg_scope(nets.nasnet.nasnet.nasnet_mobile_arg_scope()):
            features, _ = nets.nasnet.nasnet.build_nasnet_mobile(images, num_classes=None)
          self.saver = tf.train.Saver()
          with tf.variable_scope("pretrain"):
            hidden = tf.layers.dense(features, 700, activation=tf.nn.tanh)
            logits = tf.layers.dense(hidden, 250)
          training = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="pretrain")
          self.loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
          self.train = tf.train.AdamOptimizer().minimize(self.loss, var_list=training)
          self.session.run(tf.global_variables_initializer())
          self.saver.restore(self.session, path)
    """


def test_a_head_scope_on_a_restored_slim_net_is_found():
  assert scanned.found(_SLIM) == [("var-list-filter", 13)]


_RESNET = """\
    import tensorflow as tf
    import tensorflow.contrib.slim as tf_slim
    import tensorflow.contrib.slim.nets
    import tensorflow.contrib.layers as tf_layers

    class Network:
      def __init__(self, checkpoint, images, labels):
        with self.session.graph.as_default():
          with tf_slim.arg_scope(tf_slim.nets.resnet_v1.resnet_arg_scope(is_training=False)):
            resnet, _ = tf_slim.nets.resnet_v1.resnet_v1_50(images, num_classes=None)
          self.features = tf.squeeze(resnet, [1, 2])
          self.saver = tf.train.Saver()
          self.saver.restore(self.session, checkpoint)
          output = tf_layers.fully_connected(self.features, num_outputs=50, scope="output_layer")
          train_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "output_layer")
          loss = tf.losses.sparse_softmax_cross_entropy(labels, output)
          self.training = tf.train.AdamOptimizer().minimize(loss, var_list=train_vars)
    """


# Another script of the course opens the head's scope around a whole
# model: the name alone would read as a model's root.
_LAB = """\
    import tensorflow as tf

    with tf.name_scope("output_layer"):
      weights = tf.Variable(tf.zeros([784, 10]))
      logits = tf.matmul(images, weights)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    """


def test_a_layer_scoped_by_keyword_on_a_restored_resnet_is_found():
  found = scanned.in_project({"resnet.py": _RESNET, "lab.py": _LAB})
  assert found == [("var-list-filter", "resnet.py", 15)]


def test_a_keyword_scope_on_a_resnet_that_it_never_reads_is_silent():
  code = _RESNET.replace("fully_connected(self.features,",
                         "fully_connected(tf.layers.flatten(images),")
  assert scanned.in_project({"resnet.py": code, "lab.py": _LAB}) == []


def test_a_keras_application_with_published_weights_is_found():
  code = """\
      import tensorflow as tf

      def build(images, labels):
        base = tf.keras.applications.ResNet50(weights="imagenet", include_top=False)
        feats = base(images)
        with tf.variable_scope("head"):
          logits = tf.layers.dense(feats, 10)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="head")
        return tf.train.AdamOptimizer().minimize(loss, var_list=head)
      """
  assert scanned.found(code) == [("var-list-filter", 9)]


_ALEXNET = """\
    import numpy as np
    import tensorflow as tf

    class AlexNet:
      def model(self, features, net_data=None):
        with tf.variable_scope("C1"):
          if net_data:
            weight1 = tf.Variable(net_data["conv1"][0])
          else:
            weight1 = tf.Variable(tf.truncated_normal((11, 11, 3, 96)))
          conv1 = tf.nn.relu(tf.nn.conv2d(features, weight1, (1, 4, 4, 1), "SAME"))
        with tf.variable_scope("FC7"):
          weight7 = tf.Variable(net_data["fc7"][0])
          return tf.matmul(tf.layers.flatten(conv1), weight7)

      def train(self, features, labels, net_weights=None):
        net_data = None
        if net_weights:
          net_data = np.load(net_weights, encoding="latin1").item()
        fc7 = self.model(features, net_data=net_data)
        with tf.variable_scope("fc8"):
          weight8 = tf.Variable(tf.truncated_normal(shape=(4096, 10)))
          bias8 = tf.Variable(tf.zeros(shape=(10,)))
          logits = tf.add(tf.matmul(fc7, weight8), bias8)
        loss_op = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            logits=logits, labels=labels))
        return tf.train.AdamOptimizer(0.001).minimize(loss_op, var_list=[weight8, bias8])
    """


def test_a_hand_list_on_a_backbone_method_of_loaded_arrays_is_found():
  assert scanned.found(_ALEXNET) == [("var-list-filter", 27)]


_COLUMNS = """\
    import numpy as np
    import tensorflow as tf

    def old_column(state, env):
      weights = {}
      for layer in ["W1", "b1"]:
        with open("weights/%s/%s.npy" % (env, layer), "rb") as f:
          weights[layer] = tf.get_variable(env + layer, initializer=tf.constant(np.load(f)))
      layers = {"h1": tf.nn.relu(tf.matmul(state, weights["W1"]) + weights["b1"])}
      return weights, layers

    class PolicyNetwork:
      def __init__(self, state, advantage):
        trainable_list = []
        old_weights, old_layers = old_column(state, "Acrobot")
        self.W1 = tf.get_variable("W1", [4, 64])
        trainable_list.append(self.W1)
        self.U1 = tf.get_variable("U1", [64, 2])
        trainable_list.append(self.U1)
        self.h1 = tf.nn.relu(tf.matmul(state, self.W1))
        self.h1_old = old_layers["h1"]
        lateral = tf.matmul(self.h1_old, self.U1)
        self.output = tf.matmul(self.h1, tf.ones([64, 2])) + lateral
        self.loss = tf.reduce_mean(self.output * advantage)
        self.optimizer = tf.train.AdamOptimizer(0.01).minimize(self.loss, var_list=trainable_list)
    """


def test_a_new_column_on_loaded_old_columns_is_found():
  assert scanned.found(_COLUMNS) == [("var-list-filter", 25)]


# Silent twins.

_HALVES = """\
    import tensorflow as tf

    def generator(z):
      w = tf.get_variable("w", [8, 16])
      return tf.matmul(z, w)

    def build(z, real, path):
      with tf.variable_scope("generator"):
        fake = generator(z)
      with tf.variable_scope("discriminator"):
        d_fake = tf.layers.dense(fake, 1)
      with tf.variable_scope("discriminator", reuse=True):
        d_real = tf.layers.dense(real, 1)
      d_loss = tf.reduce_mean(d_fake - d_real)
      g_loss = -tf.reduce_mean(d_fake)
      d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
      g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
      d_op = tf.train.AdamOptimizer().minimize(d_loss, var_list=d_vars)
      g_op = tf.train.AdamOptimizer().minimize(g_loss, var_list=g_vars)
      tf.train.Saver().restore(sess, path)
      return d_op, g_op
    """


def test_a_gans_halves_on_a_restored_graph_are_silent():
  assert scanned.found(_HALVES) == []


def test_an_actor_critic_whose_critic_reads_the_actor_is_silent():
  code = (_HALVES.replace("generator", "actor")
          .replace("discriminator", "critic"))
  assert scanned.found(code) == []


def test_a_hand_list_beside_a_step_over_the_backbones_list_is_silent():
  code = _ALEXNET.replace(
      "        return tf.train.AdamOptimizer(0.001).minimize(loss_op, "
      "var_list=[weight8, bias8])",
      "        head = tf.train.AdamOptimizer(0.001).minimize(loss_op, "
      "var_list=[weight8, bias8])\n"
      "        aux = tf.reduce_mean(tf.square(fc7))\n"
      "        return head, tf.train.AdamOptimizer(0.001).minimize(aux)")
  assert scanned.found(code) == []


@pytest.mark.parametrize("untrainable", [
    'base = tf.keras.applications.ResNet50(weights="imagenet", '
    'include_top=False, trainable=False)',
    'base = tf.keras.applications.ResNet50(weights="imagenet", '
    'include_top=False)\n  base.trainable = False',
], ids=["keyword", "attribute"])
def test_a_backbone_set_untrainable_is_silent(untrainable):
  code = f"""\
import tensorflow as tf

def build(images, labels):
  {untrainable}
  feats = base(images)
  with tf.variable_scope("head"):
    logits = tf.layers.dense(feats, 10)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="head")
  return tf.train.AdamOptimizer().minimize(loss, var_list=head)
"""
  assert scanned.found(code) == []


def test_a_teacher_whose_output_only_meets_the_students_in_the_loss_is_silent():
  code = """\
      import tensorflow as tf
      from nets import resnet_v1

      def build(images, path):
        teacher, _ = resnet_v1.resnet_v1_50(images, num_classes=10, scope="teacher")
        tf.train.Saver().restore(sess, path)
        with tf.variable_scope("student"):
          student = tf.layers.dense(tf.layers.flatten(images), 10)
        loss = tf.reduce_mean(tf.square(tf.stop_gradient(teacher) - student))
        chosen = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="student")
        return tf.train.AdamOptimizer().minimize(loss, var_list=chosen)
      """
  assert scanned.found(code) == []


def test_a_target_network_only_in_the_loss_of_a_hand_list_is_silent():
  code = """\
      import numpy as np
      import tensorflow as tf

      def q_net(state, path):
        w = tf.Variable(np.load(path))
        return tf.matmul(state, w)

      def build(state, next_state, reward, path):
        target_q = q_net(next_state, path)
        w = tf.Variable(tf.zeros([4, 2]))
        q = tf.matmul(state, w)
        loss = tf.reduce_mean(tf.square(reward + 0.9 * target_q - tf.matmul(state, w)))
        return tf.train.AdamOptimizer().minimize(loss, var_list=[w])
      """
  assert scanned.found(code) == []


def test_a_filter_keeping_the_backbones_scope_too_is_silent():
  code = _SLIM.replace(
      'scope="pretrain")',
      'scope="pretrain") + tf.get_collection(\n'
      '          tf.GraphKeys.TRAINABLE_VARIABLES, scope="final_layer")')
  assert scanned.found(code) == []


def test_a_backbone_built_in_the_heads_scope_is_silent():
  code = _RESNET.replace("resnet_v1_50(images, num_classes=None)",
                         'resnet_v1_50(images, num_classes=None, '
                         'scope="output_layer")')
  assert scanned.in_project({"resnet.py": code, "lab.py": _LAB}) == []


def test_a_step_over_every_variable_is_silent():
  code = _SLIM.replace(", var_list=training)", ")")
  assert scanned.found(code) == []


def test_a_graph_only_evaluated_is_silent():
  code = "\n".join(line for line in _SLIM.splitlines()
                   if "self.train =" not in line and "training =" not in line)
  assert scanned.found(code) == []
