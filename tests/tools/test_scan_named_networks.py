"""`tfpartial scan`'s `var-list-filter` on networks kept as objects of
the project's classes, each given its scope as it is made (`net =
AutoEncoder('spatial')`, whose encoder opens `tf.variable_scope(
self.scope)`), as in part thirty-two's pansharpening code: a step whose
loss reads only the network its filter keeps (through loss helpers of
the project) leaves nothing out that it would train; a step whose loss
also reads networks run in inference mode on what the trained one made
(`_ = loss_net.transform(output, is_training=False)`, then
`loss_net.features`) is measured by second models. A network left out
that feeds the kept one (a frozen encoder under a trained head) is
still found. Each source is synthetic."""

import scanned


def _found(files):
  return [(path, idiom, line)
          for idiom, path, line in scanned.in_project(files)]


_NETS = """\
    import tensorflow as tf

    class AutoEncoder(object):
      def __init__(self, sco):
        self.encoder = Encoder(sco)
        self.features = None

      def transform(self, image, is_training, reuse):
        code = self.encoder.encode(image, is_training, reuse)
        self.features = code
        return tf.nn.relu(code)

    class Encoder(object):
      def __init__(self, scope_name):
        self.scope = scope_name
        with tf.variable_scope(self.scope):
          self.kernel = tf.Variable(tf.zeros([3, 3, 4, 4]), name='kernel')

      def encode(self, image, is_training, reuse):
        out = tf.nn.conv2d(image, self.kernel, [1, 1, 1, 1], 'SAME')
        return tf.maximum(out, 0.1 * out)
    """

_ALONE = """\
    import tensorflow as tf
    from nets import AutoEncoder

    def train(data):
      x = tf.placeholder(tf.float32, [8, 16, 16, 4])
      net = AutoEncoder('spatial')
      out = net.transform(x, is_training=True, reuse=False)
      loss = tf.reduce_mean(tf.square(out - x)) + similarity(out, x)
      step = tf.Variable(0)
      theta = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                scope='spatial')
      solver = tf.train.AdamOptimizer(1e-4).minimize(
          loss, global_step=step, var_list=theta)
      return solver

    def similarity(a, b):
      window = _window(11)
      return 1 - tf.reduce_mean(tf.nn.conv2d(a * b, window, [1, 1, 1, 1],
                                             'VALID'))

    def _window(size):
      return tf.constant(1.0 / size, shape=[size, size, 4, 1])
    """


def test_a_network_trained_alone_under_its_given_scope_is_silent():
  assert _found({"nets.py": _NETS, "main.py": _ALONE}) == []


def test_a_frozen_encoder_feeding_the_kept_network_is_found():
  # The left-out encoder makes what the kept one reads: a frozen part.
  main = _ALONE.replace(
      "out = net.transform(x, is_training=True, reuse=False)",
      "base = AutoEncoder('base')\n"
      "      code = base.transform(x, is_training=False, reuse=False)\n"
      "      out = net.transform(code, is_training=True, reuse=False)")
  assert _found({"nets.py": _NETS, "main.py": main}) == [
      ("main.py", "var-list-filter", 12)]


_MEASURED = """\
    import tensorflow as tf
    from nets import AutoEncoder

    def train(data):
      pan = tf.placeholder(tf.float32, [8, 16, 16, 4])
      gt = tf.placeholder(tf.float32, [8, 16, 16, 4])
      fuse = AutoEncoder('fusion')
      x = fuse.transform(pan, is_training=True, reuse=False)
      theta = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                scope='fusion')
      judge = AutoEncoder('judge')
      _ = judge.transform(gt, is_training=False, reuse=False)
      real = judge.features
      _ = judge.transform(x, is_training=False, reuse=True)
      made = judge.features
      judged = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope='judge')
      loss = tf.reduce_mean(tf.square(x - gt)) + tf.reduce_mean(
          tf.abs(real - made))
      solver = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=theta)
      saver = tf.train.Saver(var_list=judged)
      return solver, saver
    """


def test_a_loss_network_read_through_its_object_is_silent():
  assert _found({"nets.py": _NETS, "main.py": _MEASURED}) == []


def test_a_judge_fed_data_alone_feeding_the_loss_is_found():
  # The judge runs on data only (no output of the trained network):
  # its features are an input of the trained one, not its measure.
  main = _MEASURED.replace(
      "_ = judge.transform(x, is_training=False, reuse=True)\n"
      "      made = judge.features",
      "made = fuse.transform(real, is_training=True, reuse=True)")
  assert _found({"nets.py": _NETS, "main.py": main}) == [
      ("main.py", "var-list-filter", 9)]


def test_a_gan_pair_of_given_scopes_stays_silent():
  # Two networks, each trained by a step of its own: a GAN's halves.
  main = _MEASURED.replace(
      "solver = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=theta)",
      "solver = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=theta)\n"
      "      d_step = tf.train.AdamOptimizer(1e-4).minimize(-loss, "
      "var_list=judged)").replace(
          "is_training=False, reuse=True", "is_training=True, reuse=True")
  assert _found({"nets.py": _NETS, "main.py": main}) == []


def test_a_class_making_a_layer_outside_its_given_scope_is_found():
  # `encode` makes a batch norm where it runs, outside `spatial`: the
  # filter leaves that layer out of the step.
  nets = _NETS.replace("return tf.maximum(out, 0.1 * out)",
                       "return tf.layers.batch_normalization(out)")
  assert _found({"nets.py": nets, "main.py": _ALONE}) == [
      ("main.py", "var-list-filter", 10)]


_APPENDED = """\
    import tensorflow as tf

    def encoder(x, is_training=True):
      with tf.variable_scope('Encoder'):
        return tf.layers.dense(x, 16)

    def generator(z, is_training=True):
      with tf.variable_scope('Generator'):
        return tf.layers.dense(z, 64)

    def critic(x, is_training=True, reuse=False):
      with tf.variable_scope('Critic', reuse=reuse):
        return tf.layers.dense(x, 8)

    def train(batches, lr):
      losses = []
      for batch in batches:
        z = encoder(batch, is_training=True)
        recon = generator(z, is_training=False)
        made = critic(recon, is_training=False)
        real = critic(batch, is_training=False, reuse=True)
        loss = tf.reduce_mean(tf.square(batch - recon)) + tf.reduce_mean(
            tf.square(made - real))
        losses.append(loss)
      total = tf.add_n(losses)
      encoder_vars = [v for v in tf.trainable_variables()
                      if 'Encoder' in v.name]
      return tf.train.RMSPropOptimizer(lr).minimize(total,
                                                    var_list=encoder_vars)
    """


def test_appended_losses_read_by_a_critic_alone_stay_silent():
  # No generator: the critic only measures the encoder's output against
  # the data, a second model.
  source = _APPENDED.replace(
      "recon = generator(z, is_training=False)", "recon = z")
  assert _found({"train.py": source}) == []
