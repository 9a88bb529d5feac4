"""`tfpartial scan`'s `var-list-filter` on part thirty-six's lists (issue
30): a face classifier's head (`with tf.variable_scope("vgg_output")`)
built by a helper that makes its weights through another helper
(`new_fc_layer` calling `new_weights`), on a VGG-Face backbone built
from MatConvNet arrays read by `scipy.io.loadmat`; the step trains the
head and the backbone layers a list names, the rest of the backbone
stays at its published values. Silent: a backbone trained by another
step of the module (a step over every variable, a GAN's other half), a
head that reads the raw input beside a teacher whose output only meets
it in the loss, and a backbone built from nothing loaded."""

import scanned

_VGG = """
import numpy as np
import tensorflow as tf
from scipy.io import loadmat


def vgg_face(param_path, x):
    data = loadmat(param_path)
    network, weights = {}, {}
    current = x
    for layer in data['layers'][0]:
        name = layer[0]['name'][0][0]
        kernel, bias = layer[0]['weights'][0][0]
        weight = tf.Variable(kernel)
        bias = tf.Variable(np.squeeze(bias).reshape(-1))
        current = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(current, weight, 1, 'SAME'), bias))
        network[name], weights[name] = current, [weight, bias]
    return network, weights
"""

_LAYERS = """
import tensorflow as tf


def new_fc_layer(layer_last, num_inputs, num_outputs):
    weights = new_weights(shape=[num_inputs, num_outputs])
    biases = new_biases(length=num_outputs)
    return tf.matmul(layer_last, weights) + biases


def new_weights(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.05))


def new_biases(length):
    return tf.Variable(tf.constant(0.05, shape=[length]))
"""

_TRANSFER = """
import tensorflow as tf
from model.vgg import vgg_face
from model.layers import new_fc_layer


def build_transfer_vgg(images, num_class, trainable_layers=None):
    network, weights = vgg_face("vgg-face.mat", images)
    trainable = []
    if trainable_layers:
        for name in trainable_layers:
            trainable += weights[name]
    layer_latest = network['relu7']
    with tf.variable_scope("vgg_output"):
        num_features = HEAD_INPUT.get_shape()[1:].num_elements()
        layer_flat = tf.reshape(HEAD_INPUT, [-1, num_features])
        y = new_fc_layer(layer_last=layer_flat, num_inputs=num_features,
                         num_outputs=num_class)
    return y, trainable


def train_transfer(images, classes, trainable_layers=None):
    y, opt_layers = build_transfer_vgg(images, 10, trainable_layers)
    cost = COST
    var_to_train = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "vgg_output")
    var_to_train += opt_layers
    train_op = tf.train.AdamOptimizer(1e-4).minimize(cost, var_list=var_to_train)
OTHER
    with tf.train.MonitoredTrainingSession() as sess:
        while not sess.should_stop():
            sess.run(train_op)
"""

_CE = ("tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits("
       "logits=y, labels=classes))")


def _project(head="layer_latest", cost=_CE, other="", vgg=_VGG):
  return {"model/__init__.py": "", "model/vgg.py": vgg,
          "model/layers.py": _LAYERS,
          "model/transfer.py": _TRANSFER.replace("HEAD_INPUT", head).replace(
              "COST", cost).replace("OTHER\n", other)}


def _line(code, start):
  return next(number for number, line in enumerate(code.splitlines(), 1)
              if line.lstrip().startswith(start))


def _found(files):
  return [(path, line) for idiom, path, line in scanned.in_project(files)
          if idiom == "var-list-filter"]


def test_a_head_and_named_layers_of_a_loaded_backbone_are_found():
  files = _project()
  assert _found(files) == [("model/transfer.py", _line(
      files["model/transfer.py"], "var_to_train = tf.get_collection"))]


def test_a_backbone_every_variable_step_also_trains_is_silent():
  # A second step over every variable trains the backbone too.
  files = _project(other=(
      "    full_op = tf.train.AdamOptimizer(1e-5).minimize(cost)\n"))
  assert _found(files) == []


def test_a_gans_other_half_training_the_backbone_is_silent():
  # The backbone is a generator whose own step trains it.
  files = _project(other=(
      "    g_vars = [v for v in tf.trainable_variables() if 'vgg_output' not in v.name]\n"
      "    g_op = tf.train.AdamOptimizer(1e-4).minimize(-cost, var_list=g_vars)\n"))
  assert _found(files) == []


def test_a_head_on_the_raw_input_beside_a_teacher_is_silent():
  # Distillation: the loaded network is a teacher whose output only
  # meets the student's (a head on the images) in the loss.
  files = _project(head="images", cost=(
      "tf.reduce_mean(tf.square(y - tf.reduce_mean(layer_latest)))"))
  files["model/transfer.py"] = files["model/transfer.py"].replace(
      "    return y, trainable\n", "    return y, trainable, layer_latest\n"
  ).replace("y, opt_layers = build_transfer_vgg(",
            "y, opt_layers, layer_latest = build_transfer_vgg(")
  assert _found(files) == []


def test_a_backbone_built_from_nothing_loaded_is_silent():
  # Random weights: the scope names the model the step builds.
  files = _project(vgg=_VGG.replace("data = loadmat(param_path)",
                                    "data = {'layers': [[]]}"))
  assert _found(files) == []
