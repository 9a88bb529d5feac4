"""`tfpartial scan`'s `var-list-filter` on TF1 generative code trained in
stages (part twenty-eight's 28d). Silent: an encoder trained to invert a
fixed generator (zsdonghao's Unsup-Im2Im: the generator only makes the
encoder's training pairs `(G(z), z)`, a second model) and a VGG loss
network run once on the data and the generated images joined
(a slim fast style transfer: it only measures). Found: the same stages
where the encoder's target is data of its own, and the same joined run
where the network joined is a stage the step leaves out of the model's
own forward path. Each source is synthetic."""

import scanned

_STAGES = """\
    import tensorflow as tf

    def train_gan():
        z = tf.placeholder(tf.float32, [64, 100])
        real = tf.placeholder(tf.float32, [64, 64, 64, 3])
        fake = generator(z, is_train=True)
        d_fake = discriminator(fake, is_train=True, reuse=False)
        d_real = discriminator(real, is_train=True, reuse=True)
        d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
        g_loss = -tf.reduce_mean(d_fake)
        t_vars = tf.trainable_variables()
        g_vars = [v for v in t_vars if 'generator' in v.name]
        d_vars = [v for v in t_vars if 'discriminator' in v.name]
        d_optim = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
        g_optim = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)

    def train_encoder():
        z = tf.placeholder(tf.float32, [64, 100])
        codes = tf.placeholder(tf.float32, [64, 100])
        fake = generator(z, is_train=False)
        latent = encoder(fake, is_train=True)
        p_loss = tf.reduce_mean(tf.square(tf.subtract(latent, %s)))
        t_vars = tf.trainable_variables()
        p_vars = [v for v in t_vars if 'encoder' in v.name]
        p_optim = tf.train.AdamOptimizer(1e-4).minimize(p_loss, var_list=p_vars)

    def generator(z, is_train):
        with tf.variable_scope('generator'):
            return tf.layers.dense(z, 64 * 64 * 3)

    def discriminator(x, is_train, reuse):
        with tf.variable_scope('discriminator', reuse=reuse):
            return tf.layers.dense(tf.layers.flatten(x), 1)

    def encoder(x, is_train):
        with tf.variable_scope('encoder'):
            return tf.layers.dense(tf.layers.flatten(x), 100)

    if FLAGS.train_step == 'gan':
        train_gan()
    else:
        train_encoder()
    """


def test_an_encoder_inverting_a_fixed_generator_is_silent():
  # The loss compares the encoder's code with the noise the generator
  # was given: the generator only makes (image, code) pairs.
  assert scanned.found(_STAGES % "z") == []


def test_an_encoder_on_a_fixed_generator_with_its_own_target_is_found():
  assert scanned.found(_STAGES % "codes") == [("var-list-filter", 24)]


_STYLE = """\
    import tensorflow as tf
    import tensorflow.contrib.slim as slim
    import model

    with tf.Graph().as_default():
        image = tf.placeholder(tf.float32, [None, 256, 256, 3])
        style_image = tf.placeholder(tf.float32, [None, 256, 256, 3])
        generated = model.generator(image, training=True)
        _, endpoints = model.loss_model(tf.concat([image, generated, style_image], 0))
        restorer = tf.train.Saver(slim.get_variables_to_restore(include=['vgg_16']))
        loss = model.content_loss(endpoints) + model.style_loss(endpoints)
        trained = slim.get_variables_to_restore(include=['generator'])
        gradients = tf.gradients(loss, trained)
        train_op = tf.train.AdamOptimizer(1e-3).apply_gradients(zip(gradients, trained))
    """

_MODEL = """\
    import tensorflow as tf
    import tensorflow.contrib.slim as slim
    from nets import vgg

    def generator(image, training):
        with tf.variable_scope('generator'):
            return slim.conv2d(image, 3, [3, 3])

    def loss_model(x):
        return vgg.vgg_16(x, spatial_squeeze=False)

    def content_loss(endpoints):
        return tf.reduce_mean(endpoints['vgg_16/conv3/conv3_3'])

    def style_loss(endpoints):
        return tf.reduce_mean(endpoints['vgg_16/conv1/conv1_2'])
    """


def test_a_loss_network_run_on_data_and_generated_joined_is_silent():
  found = scanned.in_project({"train.py": _STYLE, "model.py": _MODEL})
  assert found == []


# A discriminator run on the real and the generated images joined trains
# in its own step: the generator's step leaves nothing out.
_JOINED_GAN = """\
    import tensorflow as tf

    def train(images, z):
        fake = generator(z)
        logits = discriminator(tf.concat([images, fake], 0))
        real_logits, fake_logits = tf.split(logits, 2)
        d_loss = tf.reduce_mean(fake_logits) - tf.reduce_mean(real_logits)
        g_loss = -tf.reduce_mean(fake_logits)
        t_vars = tf.trainable_variables()
        d_vars = [v for v in t_vars if 'discriminator' in v.name]
        g_vars = [v for v in t_vars if 'generator' in v.name]
        d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
        g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
        return d_op, g_op

    def generator(z):
        with tf.variable_scope('generator'):
            return tf.layers.dense(z, 12288)

    def discriminator(x):
        with tf.variable_scope('discriminator'):
            return tf.layers.dense(x, 1)
    """


def test_a_discriminator_on_joined_real_and_fake_trained_too_is_silent():
  assert scanned.found(_JOINED_GAN) == []


# The same joined run, where the network joined is the trained stage and
# the loss has a target of its own: the coarse stage it reads is left out.
_REFINE = """\
    import tensorflow as tf
    import tensorflow.contrib.slim as slim
    import model

    with tf.Graph().as_default():
        image = tf.placeholder(tf.float32, [None, 256, 256, 3])
        sharp = tf.placeholder(tf.float32, [None, 256, 256, 3])
        coarse = model.coarse(image, training=False)
        refined = model.refine(tf.concat([image, coarse], 3))
        restorer = tf.train.Saver(slim.get_variables_to_restore(include=['coarse']))
        loss = tf.reduce_mean(tf.abs(refined - sharp))
        trained = slim.get_variables_to_restore(include=['refine'])
        gradients = tf.gradients(loss, trained)
        train_op = tf.train.AdamOptimizer(1e-3).apply_gradients(zip(gradients, trained))
    """

_STAGES_MODEL = """\
    import tensorflow as tf
    import tensorflow.contrib.slim as slim

    def coarse(image, training):
        with tf.variable_scope('coarse'):
            return slim.conv2d(image, 3, [3, 3])

    def refine(x):
        with tf.variable_scope('refine'):
            return slim.conv2d(x, 3, [3, 3])
    """


def test_a_refining_stage_on_a_joined_coarse_stage_is_found():
  found = scanned.in_project({"train.py": _REFINE, "model.py": _STAGES_MODEL})
  assert found == [("var-list-filter", "train.py", 12)]


# GazeGAN: the filters split the variables by network; the pretrained
# content network `Gr` is restored by a saver of its own and feeds the
# generator, and no step trains it.
_GAZE = """\
    import tensorflow as tf

    class GazeGAN:
        def build_model(self):
            content = self.Gr(self.x_left)
            self.xo = self.Gx(self.x, %s)
            feats = self.vgg(self.xo)
            self.D_loss = tf.reduce_mean(self.Dx(self.xo)) - tf.reduce_mean(self.Dx(self.x))
            self.G_loss = -tf.reduce_mean(self.Dx(self.xo)) + tf.reduce_mean(feats)

        def train(self):
            t_vars = tf.trainable_variables()
            self.dx_vars = [v for v in t_vars if 'Dx' in v.name]
            self.gx_vars = [v for v in t_vars if 'Gx' in v.name]
            self.gr_vars = [v for v in t_vars if 'Gr' in v.name]
            self.vgg_vars = [v for v in t_vars if 'vgg' in v.name]
            self.p_saver = tf.train.Saver(self.gr_vars)
            %s = tf.train.Saver(self.vgg_vars)
            opti_D = tf.train.AdamOptimizer(1e-4).minimize(self.D_loss, var_list=self.dx_vars)
            opti_G = tf.train.AdamOptimizer(1e-4).minimize(self.G_loss, var_list=self.gx_vars)
            with tf.Session() as sess:
                self.p_saver.restore(sess, self.pretrain_path)
                self.v_saver.restore(sess, self.vgg_path)

        def Gr(self, x):
            with tf.variable_scope("Gr", reuse=tf.AUTO_REUSE):
                return tf.layers.dense(x, 256)

        def Gx(self, x, content):
            with tf.variable_scope("Gx", reuse=tf.AUTO_REUSE):
                return tf.layers.dense(tf.concat([x, content], -1), 64)

        def Dx(self, x):
            with tf.variable_scope("Dx", reuse=tf.AUTO_REUSE):
                return tf.layers.dense(x, 1)

        def vgg(self, x):
            with tf.variable_scope("vgg"):
                return tf.layers.dense(x, 8)
    """


def test_a_restored_content_net_feeding_the_generator_is_found():
  assert scanned.found(_GAZE % ("content", "self.v_saver")) == [
      ("var-list-filter", 14)]


def test_a_restored_net_feeding_only_the_loss_is_silent():
  # The generator no longer reads `Gr`: it and VGG only meet the loss.
  source = _GAZE.replace("content = self.Gr(self.x_left)",
                         "self.G_loss2 = tf.reduce_mean(self.Gr(self.xo))")
  assert scanned.found(source % ("self.x_left", "self.v_saver")) == []


def test_a_content_net_not_restored_alone_is_silent():
  # Restored with everything by one saver: a resumed run, no pretraining.
  source = _GAZE.replace("self.p_saver = tf.train.Saver(self.gr_vars)",
                         "self.p_saver = tf.train.Saver()")
  assert scanned.found(source % ("content", "self.v_saver")) == []


def test_a_restored_content_net_trained_by_a_step_is_silent():
  source = _GAZE.replace("var_list=self.gx_vars)",
                         "var_list=self.gx_vars + self.gr_vars)")
  assert scanned.found(source % ("content", "self.v_saver")) == []

