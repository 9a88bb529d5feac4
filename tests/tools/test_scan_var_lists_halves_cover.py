"""`tfpartial scan`'s `var-list-filter` on a GAN whose halves do not
cover the network its losses read (part forty-two's Partial-Domain-
Adaptation: an AlexNet feature extractor built by `get_variable` under
`conv1`..`fc8`, a classifier and a discriminator of bare
`tf.Variable`s; the generator and the classifier train
`[v for v in tf.trainable_variables() if v.name.split('/')[0] in
args.train_layers]` with the default `['fc8']`, the classifier's list
nested, `var_list=[net.theta_C, tvars]`, which TensorFlow flattens,
beside the discriminator's step over `theta_D`). The pairs cover the
classifier and the discriminator, not conv1-fc7: a freeze. The look-
alike stays silent: the same GAN whose generator list is every
feature-extractor scope. Synthetic sources in the shape of real code.
"""

import pytest
import scanned


_GAN = """\
    import tensorflow as tf


    def layer(x, n_in, n_out, name):
      with tf.variable_scope(name):
        w = tf.get_variable('w', shape=[n_in, n_out])
        b = tf.get_variable('b', [n_out])
        return tf.nn.relu(tf.nn.xw_plus_b(x, w, b))


    class GAN(object):

      def __init__(self, x, y, d):
        self.C_W1 = tf.Variable(tf.random_normal([8, 4]))
        self.theta_C = [self.C_W1]
        self.D_W1 = tf.Variable(tf.random_normal([8, 2]))
        self.theta_D = [self.D_W1]
        feature = self.features(x)
        logit_d = tf.matmul(feature, self.D_W1)
        self.D_loss = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits(logits=logit_d, labels=d))
        self.G_loss = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits(
                logits=logit_d, labels=1 - d))
        self.C_loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(
                logits=tf.matmul(feature, self.C_W1), labels=y))

      def features(self, x):
        h = layer(x, 16, 16, 'conv1')
        h = layer(h, 16, 16, 'fc7')
        return layer(h, 16, 8, 'fc8')
    """

_MAIN = """\
    import argparse
    import tensorflow as tf
    from gan import GAN

    parser = argparse.ArgumentParser()
    parser.add_argument('--train_layers', default={layers})
    args = parser.parse_args()


    def train(x, y, d):
      net = GAN(x, y, d)
      tvars = [v for v in tf.trainable_variables()
               if v.name.split('/')[0] in args.train_layers]
      d_op = tf.train.AdamOptimizer(1e-4).minimize(
          net.D_loss, var_list=net.theta_D)
      g_op = tf.train.AdamOptimizer(1e-4).minimize(
          net.G_loss, var_list=tvars)
      c_op = tf.train.AdamOptimizer(1e-4).minimize(
          net.C_loss, var_list=[net.theta_C, tvars])
      with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(100):
          sess.run([d_op, g_op, c_op])
    """


def _project(layers):
  return {"gan.py": _GAN, "main.py": _MAIN.format(layers=layers)}


@pytest.mark.xfail(strict=True, reason="open: t67-miss42 left the halves "
                   "gate's cover unbuilt (see its report)")
def test_gan_halves_that_leave_the_feature_extractor_out_are_found():
  assert scanned.in_project(_project("['fc8']")) == [
      ("var-list-filter", "main.py", 12)]


def test_gan_halves_that_cover_the_feature_extractor_stay_silent():
  assert scanned.in_project(_project("['conv1', 'fc7', 'fc8']")) == []
