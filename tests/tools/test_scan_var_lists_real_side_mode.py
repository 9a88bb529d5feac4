"""`tfpartial scan` on GANs over features, each run a mode of its own:
one trains a feature generator and a discriminator whose real samples
are a feature extractor's features, another trains that extractor
against a second discriminator whose real samples are the generator's
features (adversarial feature augmentation). In each, the network no
step trains only makes the discriminator's real samples (read nowhere
else): the data the other network imitates, not a part either step
trains, silent. Beside it, a generator made from those features (the
extractor under the fakes too): found."""

import scanned

_GAN = """\
    import tensorflow as tf

    class Model(object):
      def __init__(self, mode):
        self.mode = mode

      def feature_extractor(self, images, reuse=False):
        with tf.variable_scope('feature_extractor', reuse=reuse):
          return tf.layers.dense(images, 128)

      def feature_generator(self, noise, reuse=False):
        with tf.variable_scope('feature_generator', reuse=reuse):
          return tf.layers.dense(noise, 128)

      def feature_discriminator(self, features, reuse=False):
        with tf.variable_scope('feature_discriminator', reuse=reuse):
          return tf.layers.dense(features, 1)

      def feature_discriminator_difa(self, features, reuse=False):
        with tf.variable_scope('feature_discriminator_difa', reuse=reuse):
          return tf.layers.dense(features, 1)

      def build_model(self):
        if self.mode == 'train_feature_extractor':
          self.images = tf.placeholder(tf.float32, [None, 784], 'images')
          self.labels = tf.placeholder(tf.int64, [None], 'labels')
          self.logits = tf.layers.dense(self.feature_extractor(self.images), 10)
          self.loss = tf.reduce_mean(
              tf.nn.sparse_softmax_cross_entropy_with_logits(
                  labels=self.labels, logits=self.logits))
          self.train_op = tf.train.AdamOptimizer(1e-3).minimize(self.loss)
        elif self.mode == 'train_feature_generator':
          self.images = tf.placeholder(tf.float32, [None, 784], 'images')
          self.noise = tf.placeholder(tf.float32, [None, 100], 'noise')
          self.real_features = self.feature_extractor(self.images)
          self.gen_features = self.feature_generator(self.noise)
          self.logits_real = self.feature_discriminator(self.real_features)
          self.logits_fake = self.feature_discriminator(self.gen_features,
                                                        reuse=True)
          self.d_loss = tf.reduce_mean(tf.square(self.logits_real - 1.)) + (
              tf.reduce_mean(tf.square(self.logits_fake)))
          self.g_loss = tf.reduce_mean(tf.square(self.logits_fake - 1.))
          t_vars = tf.trainable_variables()
          d_vars = [var for var in t_vars if 'feature_discriminator' in var.name]
          g_vars = [var for var in t_vars if 'feature_generator' in var.name]
          self.d_train_op = tf.train.AdamOptimizer(1e-3).minimize(
              self.d_loss, var_list=d_vars)
          self.g_train_op = tf.train.AdamOptimizer(1e-3).minimize(
              self.g_loss, var_list=g_vars)
        elif self.mode == 'train_difa':
          self.noise = tf.placeholder(tf.float32, [None, 100], 'noise')
          self.trg_images = tf.placeholder(tf.float32, [None, 784], 'target')
          self.features_from_s = self.feature_generator(self.noise)
          self.features_from_e = self.feature_extractor(self.trg_images)
          self.logits_real = self.feature_discriminator_difa(
              self.features_from_s)
          self.logits_fake = self.feature_discriminator_difa(
              self.features_from_e, reuse=True)
          self.d_loss = tf.reduce_mean(tf.square(self.logits_real - 1.)) + (
              tf.reduce_mean(tf.square(self.logits_fake)))
          self.e_loss = tf.reduce_mean(tf.square(self.logits_fake - 1.))
          t_vars = tf.trainable_variables()
          e_vars = [var for var in t_vars if 'feature_extractor' in var.name]
          d_vars = [var for var in t_vars
                    if 'feature_discriminator_difa' in var.name]
          self.e_train_op = tf.train.AdamOptimizer(1e-3).minimize(
              self.e_loss, var_list=e_vars)
          self.d_train_op = tf.train.AdamOptimizer(1e-3).minimize(
              self.d_loss, var_list=d_vars)
    """


def _lists(text):
  return [f[0] for f in scanned.in_text(text, "var-list-filter")]


def test_a_pretrained_network_making_only_the_real_samples_is_silent():
  assert _lists(_GAN) == []


def test_a_pretrained_network_under_the_generator_too_is_found():
  # In the first GAN's mode only: the second stays silent.
  text = _GAN.replace("self.feature_generator(self.noise)",
                      "self.feature_generator(self.real_features)", 1)
  assert _lists(text) == ["var-list-filter"]
