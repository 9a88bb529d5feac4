"""`tfpartial scan`'s `var-list-filter` on TF1 steps that train one scope
by its name where that scope is not the whole model: a pretrained
backbone built outside the scope the new network is built and trained
in (referring-segmentation models on DeepLab-ResNet); a helper that
passes its list on to the step but sets it anew to a filtered list under
an option (MAC network's `--trainSubset`); a captioner whose CNN's own
train op the script runs only where an option's default never goes.
Each source is
synthetic, in the shape of real code; the look-alikes must stay silent."""

import textwrap

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

import scanned


def _found(text):
  sources = [_files.Source("t.py", text)]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, f.line) for f in findings]


_BACKBONE = """\
class ResNet(object):
  def __init__(self, image):
    w = tf.get_variable('res5/w', [3, 3, 3, 8])
    self.layers = {'res5': tf.nn.conv2d(image, w, [1, 1, 1, 1], 'SAME')}

class Segmenter(object):
  def __init__(self, image, target):
    self.target = target
%s
  def build(self):
    w = tf.get_variable('head/w', [1, 1, 8, 1])
    self.score = tf.nn.conv2d(self.feat, w, [1, 1, 1, 1], 'SAME')

  def train_op(self):
    tvars = [v for v in tf.trainable_variables()
             if v.op.name.startswith('seg')]
    loss = tf.reduce_mean(tf.square(self.score - self.target))
    self.op = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=tvars)
"""

CASES = {
    # The backbone built before the scope is opened, its output read
    # inside: training the scope leaves the backbone fixed.
    "a backbone built outside the scope the step trains": ("""\
        resnet = ResNet(image)
        self.feat = resnet.layers['res5']
        with tf.variable_scope('seg'):
          self.build()
          self.train_op()
        """, [("var-list-filter", 19)]),
    # The look-alike: the backbone built inside the scope; the scope is
    # the whole model.
    "a backbone built inside the scope the step trains": ("""\
        with tf.variable_scope('seg'):
          resnet = ResNet(image)
          self.feat = resnet.layers['res5']
          self.build()
          self.train_op()
        """, []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_scope_is_the_whole_model_only_with_all_it_reads(name):
  built, expected = CASES[name]
  lines = textwrap.indent(textwrap.dedent(built), "    ")
  assert _found(_BACKBONE % lines.rstrip()) == expected


WRAPPERS = {
    # The helper's list is chosen anew under an option: its own filter.
    "a helper that filters its list under an option": ("""\
        def gradients_of(optimizer, loss, var_list=None):
          if config.train_subset:
            var_list = []
            for var in tf.trainable_variables():
              if any(s in var.name for s in config.var_subset):
                var_list.append(var)
          return optimizer.compute_gradients(loss, var_list)

        grads = gradients_of(tf.train.AdamOptimizer(1e-3), loss)
        """, [("var-list-filter", 6)]),
    # The look-alike: a default filled in, nothing left out.
    "a helper that fills in a default list": ("""\
        def gradients_of(optimizer, loss, var_list=None):
          if var_list is None:
            var_list = tf.trainable_variables()
          return optimizer.compute_gradients(loss, var_list)

        grads = gradients_of(tf.train.AdamOptimizer(1e-3), loss)
        """, []),
}


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_a_helper_s_own_filter_is_found(name):
  text, expected = WRAPPERS[name]
  assert _found(textwrap.dedent(text)) == expected


_CAPTIONER = """\
    import tensorflow as tf
    class Captioner(object):
      def __init__(self, images, words):
        with tf.variable_scope('cnn'):
          w = tf.get_variable('w', [3, 3, 3, 8])
          feats = tf.nn.conv2d(images, w, [1, 1, 1, 1], 'SAME')
        with tf.variable_scope('rnnlm'):
          v = tf.get_variable('v', [8, 100])
          self.cost = tf.reduce_mean(tf.matmul(tf.reduce_mean(feats, [1, 2]), v))
        tvars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='rnnlm')
        self.train_op = tf.train.AdamOptimizer(1e-3).minimize(self.cost, var_list=tvars)
        cnn_tvars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='cnn')
        self.cnn_train_op = tf.train.AdamOptimizer(1e-5).minimize(self.cost, var_list=cnn_tvars)
    """

_TRAIN = """\
    import argparse
    import tensorflow as tf
    from model import Captioner
    parser = argparse.ArgumentParser()
    parser.add_argument('--finetune_cnn_after', type=int, default=%s)
    opt = parser.parse_args()
    model = Captioner(images, words)
    for iteration in range(1000):
      if iteration <= opt.finetune_cnn_after or opt.finetune_cnn_after == -1:
        sess.run(model.train_op)
      else:
        sess.run([model.train_op, model.cnn_train_op])
    """


@pytest.mark.parametrize("default, expected", [
    # By default the CNN's op never runs: only the language model trains.
    ("-1", [("var-list-filter", "model.py", 10)]),
    # The look-alike: by default the CNN trains too, from step 0.
    ("0", []),
])
def test_a_train_op_run_only_off_by_default_is_no_half(default, expected):
  assert scanned.in_project({"model.py": _CAPTIONER,
                             "train.py": _TRAIN % default}) == expected
