"""`tfpartial scan` after review 38 of `_restored`: what each function
of a model file builds from a restored part is gathered in one pass,
so a model file of many functions each opening the trained scope, beside
a name-filtered restore of a pretrained encoder, costs about the same
per function however many there are; what it finds is unchanged."""

import scanned

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _model(n):
  """A model file: `n` functions each opening `'UNet'`, and a filtered
  restore of `MobilenetV2`."""
  return ("import tensorflow as tf\nfrom tensorflow.contrib import slim\n"
          + "".join(
              f"\ndef block_{i}(inputs, n):\n"
              "    h = tf.nn.relu(inputs)\n"
              "    with tf.variable_scope('UNet'):\n"
              f"        net = slim.conv2d_transpose(h, n, 3, scope='up{i}')\n"
              "    return net\n" for i in range(n)) +
          "\ndef load_pretrained(sess):\n"
          "    to_restore = {v.name.split(':')[0]: v "
          "for v in tf.global_variables()}\n"
          "    to_restore = {v: to_restore[v] for v in to_restore "
          "if v.find('MobilenetV2') != -1}\n"
          "    saver = tf.train.Saver(var_list=to_restore)\n"
          "    saver.restore(sess, 'mobilenet_v2_1.0_224.ckpt')\n")


_TRAIN = """\
import tensorflow as tf
from model import unet
sess = tf.Session()
x = tf.placeholder(tf.float32, [None, None, None, 3])
network = unet.block_0(x, 2)
to_train = {v.name: v for v in tf.trainable_variables()}
to_train = {v: to_train[v] for v in to_train if v.find('UNet') != -1}
loss = tf.reduce_mean(tf.square(network))
opt = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=to_train)
unet.load_pretrained(sess)
"""


def _work(n):
  sources = [_files.Source("model/unet.py", _model(n)),
             _files.Source("train.py", _TRAIN)]
  return scanned.calls_made(lambda: _scan.scan_project(sources),
                            "_restored.py")[0]


def test_the_builders_of_a_restored_part_are_read_in_one_pass():
  n = 20
  small, large = _work(n), _work(4 * n)
  assert large <= 6 * small, (small, large)


def test_what_a_model_file_of_many_blocks_finds_is_unchanged():
  assert scanned.in_project({"model/unet.py": _model(3),
                             "train.py": _TRAIN}) == []
