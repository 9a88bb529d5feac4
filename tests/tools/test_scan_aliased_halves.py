"""`tfpartial scan`'s `var-list-filter` on a GAN whose two training
methods each name their network by a local alias (`model =
self.generator` in `train_g`, `model = self.discriminator` in
`train_d`, both then `opt.compute_gradients(loss, model.tvars)`), as
in part thirty-two's StarGAN: the two lists are spelled alike but are
two objects' lists, the GAN's halves, and are silent. A method training
one network's list while its loss reads a second network no step
trains is still found. Each source is synthetic."""

import scanned


_NETS = """\
    import tensorflow as tf

    class Generator:
      def __init__(self, name='Generator', config=None):
        self.name = name
        if config is not None:
          self.__dict__.update(config.__dict__)

      def __call__(self, x, reuse=None):
        with tf.variable_scope(self.name, reuse=reuse):
          y = self.block(tf.layers.dense(x, 8))
        self.tvars = tf.trainable_variables(self.name)
        return y

      def block(self, x):
        with tf.variable_scope('Block'):
          return tf.layers.dense(x, 8)

    class Discriminator:
      def __init__(self, name='Discriminator', config=None):
        self.name = name
        if config is not None:
          self.__dict__.update(config.__dict__)

      def __call__(self, x, reuse=None):
        with tf.variable_scope(self.name, reuse=reuse):
          y = self.block(tf.layers.dense(x, 1))
        self.tvars = tf.trainable_variables(self.name)
        return y

      def block(self, x):
        with tf.variable_scope('Block'):
          return tf.layers.dense(x, 1)
    """

_MODEL = """\
    import tensorflow as tf
    from network import Generator, Discriminator

    class Model:
      def build(self, inputs):
        self.generator = Generator('Generator', self.config)
        self.outputs = self.generator(inputs)
        self.discriminator = Discriminator('Discriminator', self.config)
        fake = self.discriminator(self.outputs)
        real = self.discriminator(inputs, reuse=True)
        self.g_loss = -tf.reduce_mean(fake)
        self.d_loss = tf.reduce_mean(fake) - tf.reduce_mean(real)

      def train_g(self, global_step):
        model = self.generator
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS, 'Generator')
        opt = tf.train.AdamOptimizer(1e-4)
        with tf.control_dependencies(update_ops):
          grads_vars = opt.compute_gradients(self.g_loss, model.tvars)
          update_ops = [opt.apply_gradients(grads_vars, global_step)]
        for grad, var in grads_vars:
          self.sums.append(tf.summary.histogram(var.op.name, grad))
        with tf.control_dependencies(update_ops):
          return tf.no_op('train')

      def train_d(self, global_step):
        model = self.discriminator
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS, 'Discriminator')
        opt = tf.train.AdamOptimizer(1e-4)
        with tf.control_dependencies(update_ops):
          grads_vars = opt.compute_gradients(self.d_loss, model.tvars)
          update_ops = [opt.apply_gradients(grads_vars)]
        for grad, var in grads_vars:
          self.sums.append(tf.summary.histogram(var.op.name, grad))
        with tf.control_dependencies(update_ops):
          return tf.no_op('train')
    """


def test_a_gan_whose_halves_are_named_by_one_alias_is_silent():
  assert scanned.in_project({"network.py": _NETS, "model.py": _MODEL}) == []


def test_one_network_trained_beside_an_untrained_one_is_found():
  # Only the generator trains; its loss reads an encoder no step trains.
  model = _MODEL.replace(
      "self.outputs = self.generator(inputs)",
      "self.encoder = Discriminator('Encoder', self.config)\n"
      "        self.outputs = self.generator(self.encoder(inputs))")
  model = model[:model.index("      def train_d")]
  assert scanned.in_project({"network.py": _NETS, "model.py": model}) == [
      ("var-list-filter", "model.py", 20)]
