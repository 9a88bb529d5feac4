"""`tfpartial scan`'s `var-list-filter` on a discriminator given its
real side by a third network: in one mode a GAN's halves train while
the discriminator reads, as 'real', what a network trained only in
another mode makes from the images alone (part sixteen's adversarial
feature augmentation). That network plays the data's part: silent.
Where the discriminator's real side is made from the generator's
output, the network trained in the other mode is a stage on the path,
left behind: still found. Each source is synthetic."""

import scanned


def _found(files):
  return [(path, idiom, line)
          for idiom, path, line in scanned.in_project(files)]


_MODEL = """\
    import tensorflow as tf

    class Model:
      def __init__(self, mode):
        self.mode = mode

      def extractor(self, images, reuse=False):
        with tf.variable_scope('extractor', reuse=reuse):
          return tf.layers.dense(images, 16)

      def generator(self, noise, reuse=False):
        with tf.variable_scope('generator', reuse=reuse):
          return tf.layers.dense(noise, 16)

      def discriminator(self, features, reuse=False):
        with tf.variable_scope('discriminator', reuse=reuse):
          return tf.layers.dense(features, 1)

      def build_model(self):
        if self.mode == 'pretrain':
          self.images = tf.placeholder(tf.float32, [None, 64])
          self.labels = tf.placeholder(tf.float32, [None, 16])
          logits = self.extractor(self.images)
          self.loss = tf.reduce_mean(tf.square(logits - self.labels))
          self.train_op = tf.train.AdamOptimizer().minimize(self.loss)
        elif self.mode == 'train_gan':
          self.images = tf.placeholder(tf.float32, [None, 64])
          self.noise = tf.placeholder(tf.float32, [None, 8])
          self.fake = self.generator(self.noise)
          self.real = self.extractor(%s)
          self.logits_real = self.discriminator(self.real)
          self.logits_fake = self.discriminator(self.fake, reuse=True)
          self.d_loss = tf.reduce_mean(tf.square(self.logits_real - 1.)) + (
              tf.reduce_mean(tf.square(self.logits_fake)))
          self.g_loss = tf.reduce_mean(tf.square(self.logits_fake - 1.))
          t_vars = tf.trainable_variables()
          d_vars = [v for v in t_vars if 'discriminator' in v.name]
          g_vars = [v for v in t_vars if 'generator' in v.name]
          self.d_op = tf.train.AdamOptimizer().minimize(
              self.d_loss, var_list=d_vars)
          self.g_op = tf.train.AdamOptimizer().minimize(
              self.g_loss, var_list=g_vars)
        elif self.mode == 'adapt':
          self.images = tf.placeholder(tf.float32, [None, 64])
          feats = self.extractor(self.images)
          self.e_loss = tf.reduce_mean(tf.square(feats))
          e_vars = [v for v in tf.trainable_variables()
                    if 'extractor' in v.name]
          self.e_op = tf.train.AdamOptimizer().minimize(
              self.e_loss, var_list=e_vars)
    """


def test_a_third_network_giving_the_real_side_from_data_is_silent():
  assert _found({"t.py": _MODEL % "self.images"}) == []


def test_a_network_of_another_mode_on_the_generator_output_is_found():
  assert _found({"t.py": _MODEL % "self.fake"}) == [
      ("t.py", "var-list-filter", 37)]
