"""`tfpartial scan`'s `var-list-filter` on a network restored from saved
arrays and built in place before the one a step trains (part
twenty-eight's 28d: SRNTT's content extractor). A function builds the
pretrained network in a `with tf.variable_scope(...)` block of its own
and, in a later block, the network a step's filter keeps on what the
first made; the module hands the first network to a loader of saved
arrays (`tl.files.load_and_assign_npz(..., network=...)`) and no step's
list keeps its scope: it stays at its loaded values inside the model.
Silent: the loaded network only measured in the loss, kept by a step's
list too, a GAN's generator loaded beside its discriminator, a teacher
loaded for distillation, and a network no loader is given. Each source
is synthetic."""

import scanned

_SRNTT = """\
    import tensorflow as tf
    import tensorlayer as tl
    from tensorlayer.layers import InputLayer, Conv2d, ConcatLayer

    class SRNTT:
        def model(self, inputs, maps=None, reuse=False):
            with tf.variable_scope("content_extractor", reuse=reuse):
                net = InputLayer(inputs=inputs, name='input')
                content_feature = Conv2d(net=net, n_filter=64, name='c1')
                net_upscale = Conv2d(net=content_feature, n_filter=3, name='out')
                if maps is None:
                    return net_upscale, None
            with tf.variable_scope("texture_transfer", reuse=reuse):
                map_in = InputLayer(inputs=%s, name='content')
                map_ref = InputLayer(inputs=maps[0], name='ref')
                net = ConcatLayer(layer=[map_in, map_ref], concat_dim=-1, name='concat')
                net_srntt = Conv2d(net=net, n_filter=3, name='out')
            return net_upscale, net_srntt

        def discriminator(self, x, reuse=False):
            with tf.variable_scope("discriminator", reuse=reuse):
                return tf.layers.dense(x, 1)

        def train(self, maps, target, path):
            self.net_upscale, self.net_srntt = self.model(self.input, maps)
            d_fake = self.discriminator(self.net_srntt.outputs)
            d_real = self.discriminator(target, reuse=True)
            loss_d = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
            loss = tf.reduce_mean(tf.abs(self.net_srntt.outputs - target)) - tf.reduce_mean(d_fake)
            trainable_vars = tf.trainable_variables()
            var_g = [v for v in trainable_vars if %s]
            var_d = [v for v in trainable_vars if 'discriminator' in v.name]
            optimizer = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=var_g)
            optimizer_d = tf.train.AdamOptimizer(1e-4).minimize(loss_d, var_list=var_d)
            with tf.Session() as sess:
                tl.files.load_and_assign_npz(sess=sess, name=path, network=%s)
    """

_FEATURE = "content_feature.outputs"
_KEPT = "'texture_transfer' in v.name"


def test_a_loaded_extractor_feeding_the_trained_network_is_found():
  source = _SRNTT % (_FEATURE, _KEPT, "self.net_upscale")
  assert scanned.found(source) == [("var-list-filter", 31)]


def test_a_loaded_extractor_only_measured_in_the_loss_is_silent():
  # The texture transfer runs on the input; the extractor's output is
  # only compared with the target (a content loss).
  source = _SRNTT % ("inputs", _KEPT, "self.net_upscale")
  source = source.replace(
      "loss = tf.reduce_mean(",
      "loss = tf.reduce_mean(tf.abs(self.net_upscale.outputs - target)) + "
      "tf.reduce_mean(", 1)
  assert scanned.found(source) == []


def test_a_loaded_extractor_kept_by_the_step_is_silent():
  kept = "'texture_transfer' in v.name or 'content_extractor' in v.name"
  assert scanned.found(_SRNTT % (_FEATURE, kept, "self.net_upscale")) == []


def test_an_extractor_no_loader_is_given_is_silent():
  # The loader resumes the texture transfer network; nothing says the
  # extractor holds pretrained values.
  assert scanned.found(_SRNTT % (_FEATURE, _KEPT, "self.net_srntt")) == []


# A GAN built in one function: the generator, loaded from saved arrays,
# feeds the discriminator's block; each has a step of its own.
_GAN = """\
    import tensorflow as tf
    import tensorlayer as tl
    from tensorlayer.layers import InputLayer, DenseLayer

    class GAN:
        def build(self, z, x, path):
            with tf.variable_scope("generator"):
                net_g = DenseLayer(InputLayer(z, name='z'), 64, name='g1')
            with tf.variable_scope("discriminator", reuse=tf.AUTO_REUSE):
                d_fake = DenseLayer(InputLayer(net_g.outputs, name='f'), 1, name='d1')
                d_real = DenseLayer(InputLayer(x, name='r'), 1, name='d1')
            d_loss = tf.reduce_mean(d_fake.outputs) - tf.reduce_mean(d_real.outputs)
            g_loss = -tf.reduce_mean(d_fake.outputs)
            t_vars = tf.trainable_variables()
            g_vars = [v for v in t_vars if 'generator' in v.name]
            d_vars = [v for v in t_vars if 'discriminator' in v.name]
            self.d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
            self.g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
            with tf.Session() as sess:
                tl.files.load_and_assign_npz(sess=sess, name=path, network=net_g)
    """


def test_a_loaded_generator_beside_its_discriminator_is_silent():
  assert scanned.found(_GAN) == []


# Distillation: the teacher, loaded from saved arrays, gives soft
# targets; the student runs on the input.
_TEACHER = """\
    import tensorflow as tf
    import tensorlayer as tl
    from tensorlayer.layers import InputLayer, DenseLayer

    def distill(x, y, path):
        with tf.variable_scope("teacher"):
            teacher = DenseLayer(InputLayer(x, name='t_in'), 10, name='t1')
            soft = tf.nn.softmax(teacher.outputs / 4.0)
        with tf.variable_scope("student"):
            student = DenseLayer(InputLayer(x, name='s_in'), 10, name='s1')
        loss = tf.losses.softmax_cross_entropy(y, student.outputs) + \\
            tf.reduce_mean(tf.square(tf.nn.softmax(student.outputs / 4.0) - soft))
        s_vars = [v for v in tf.trainable_variables() if 'student' in v.name]
        op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=s_vars)
        with tf.Session() as sess:
            tl.files.load_and_assign_npz(sess=sess, name=path, network=teacher)
        return op
    """


def test_a_loaded_teacher_for_distillation_is_silent():
  assert scanned.found(_TEACHER) == []
