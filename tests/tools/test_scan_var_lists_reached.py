"""`tfpartial scan`'s `var-list-filter` on what a run trains against
what its loss reaches: the filters of one function's steps (grouped
into one op, or fetched together) each keep a scope below one root,
while the loss runs the whole network the project builds under that
root (part twenty-three's slim Inception-ResNet: three of its layers
trained at two learning rates). Their union leaves the rest of the
network out. Twins, silent: the filters name every scope right under
the root that holds weights (a pooling layer's scope holds none), or a
GAN's two halves under one model scope."""

from tests.tools import scanned

_NET = """
import tensorflow as tf
slim = tf.contrib.slim


def inception(inputs, num_classes, scope=None):
    with tf.variable_scope(scope, 'Inception', [inputs]):
        net = slim.conv2d(inputs, 32, 3, scope='Conv2d_1a_3x3')
        net = slim.conv2d(net, 32, 3, scope='Conv2d_2a_3x3')
        net = slim.max_pool2d(net, 3, scope='MaxPool_3a_3x3')
        with tf.variable_scope('Mixed_5b'):
            net = slim.conv2d(net, 64, 1, scope='Conv2d_0a_1x1')
        with tf.variable_scope('Logits'):
            logits = slim.fully_connected(slim.flatten(net), num_classes,
                                          scope='fc')
    return logits
"""

_GROUPED = """
import tensorflow as tf
from nets import inception


def main(images, labels):
    logits = inception.inception(images, 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    first = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                              scope='Inception/Conv2d_1a_3x3')
    second = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                               scope='Inception/Conv2d_2a_3x3')
    op_1 = tf.train.AdamOptimizer(1e-5).minimize(loss, var_list=first)
    op_2 = tf.train.AdamOptimizer().minimize(loss, var_list=second)
    train_op = tf.group(op_1, op_2)
    with tf.Session() as sess:
        sess.run(train_op)
"""


def _found(net, train):
  return [(idiom, line) for idiom, path, line in scanned.in_project(
      {"nets/inception.py": net, "train.py": train}) if path == "train.py"]


def test_sub_scopes_grouped_leaving_the_rest_of_the_net_are_found():
  assert _found(_NET, _GROUPED) == [("var-list-filter", 10)]


def test_name_filters_fetched_together_leaving_the_net_are_found():
  # Written another way: tests of the names, two ops in one `run`.
  code = _GROUPED.replace(
      "tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,\n"
      "                              scope='Inception/Conv2d_1a_3x3')",
      "[v for v in tf.trainable_variables()\n"
      "             if v.name.startswith('Inception/Logits')]").replace(
          "tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,\n"
          "                               scope='Inception/Conv2d_2a_3x3')",
          "[v for v in tf.trainable_variables()\n"
          "              if 'Inception/Mixed_5b' in v.name]").replace(
              "train_op = tf.group(op_1, op_2)", "train_op = [op_1, op_2]")
  assert "Mixed_5b" in code and "Logits" in code
  assert _found(_NET, code) == [("var-list-filter", 10)]


def test_sub_scopes_naming_every_layer_of_the_net_are_silent():
  # What is left is a pooling layer's scope, which holds no variable.
  net = _NET.split("        with tf.variable_scope('Mixed_5b')")[0] + (
      "    return net\n")
  assert _found(net, _GROUPED) == []


_GAN_NET = """
import tensorflow as tf


def model(z, x):
    with tf.variable_scope('model'):
        with tf.variable_scope('generator'):
            fake = tf.layers.dense(z, 8)
        with tf.variable_scope('discriminator'):
            real = tf.layers.dense(x, 1)
            made = tf.layers.dense(fake, 1, reuse=True)
    return real, made
"""

_GAN = """
import tensorflow as tf
from nets import inception


def main(z, x):
    real, made = inception.model(z, x)
    d_loss = tf.reduce_mean(made - real)
    g_loss = -tf.reduce_mean(made)
    g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                               scope='model/generator')
    d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                               scope='model/discriminator')
    d_op = tf.train.AdamOptimizer().minimize(d_loss, var_list=d_vars)
    g_op = tf.train.AdamOptimizer().minimize(g_loss, var_list=g_vars)
    with tf.Session() as sess:
        sess.run(tf.group(d_op, g_op))
"""


def test_a_gans_halves_under_one_model_scope_are_silent():
  assert _found(_GAN_NET, _GAN) == []


# A template's name is its model's scope: the only model the loss reaches,
# resumed from a checkpoint of the same scope (part twenty-three's
# PixelCNN, `h=None`, no VAE).
_TEMPLATE = """
import tensorflow as tf
import pixel_cnn_pp.nn as nn
from pixel_cnn_pp.model import model_spec

x = tf.placeholder(tf.float32, [None, 8])
with tf.name_scope('pixel_cnn'):
    pixel_cnn = tf.make_template('pixel_cnn', model_spec)
    out = pixel_cnn(x, None)
    params = [v for v in tf.trainable_variables() if 'pixel_cnn' in v.name]
loss = nn.discretized_mix_logistic_loss(x, out)
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=params)
var_list = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope='pixel_cnn')
opt_list = [v for v in var_list if 'adam' in v.name.lower()]
var_list = [v for v in var_list if 'adam' not in v.name.lower()]
saver = tf.train.Saver(var_list=var_list)
saver_opt = tf.train.Saver(var_list=opt_list)
config = tf.ConfigProto(allow_soft_placement=True)
with tf.Session(config=config) as sess:
    saver.restore(sess, 'ckpt/params.ckpt')
    saver_opt.restore(sess, 'ckpt/opt.ckpt')
    for _ in range(10):
        sess.run(train_op)
"""


def test_a_filter_keeping_the_only_template_is_silent():
  assert scanned.found(_TEMPLATE) == []


def test_the_template_named_by_keyword_is_silent():
  code = _TEMPLATE.replace("tf.make_template('pixel_cnn', model_spec)",
                           "tf.compat.v1.make_template(\n"
                           "        name_='pixel_cnn', func_=model_spec)")
  assert scanned.found(code) == []


def test_a_template_fed_by_a_model_built_beside_it_is_found():
  # The VAE's encoder feeds the template; no step trains it.
  code = _TEMPLATE.replace(
      "    out = pixel_cnn(x, None)\n",
      "    with tf.variable_scope('vae'):\n"
      "        h = tf.layers.dense(x, 8)\n"
      "    out = pixel_cnn(x, h)\n")
  assert scanned.found(code) == [("var-list-filter", 12)]
