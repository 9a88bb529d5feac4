"""`tfpartial scan`'s `var-list-filter` on a step that trains fewer
variables from a point of training on (part twenty-eight's 28d: AGGAN's
attention networks). Two steps minimise one loss, one over a wider list;
a test of the loop's counter against a bound picks the wider one before
the bound and the narrower one after it: from then on the scopes only
the wider list kept (the attention nets whose masks blend the
generators' outputs) stay fixed, though the loss still reaches them.
Silent: the narrower step picked before the bound (a warm-up of part of
the model, the whole trained after it), arms picked by the counter's
parity (alternation), a later step of its own for what the narrower one
drops, a GAN whose later range adds the discriminator (other losses),
and the two steps run together. Each source is synthetic."""

import scanned

_MODEL = """\
    import tensorflow as tf

    def attention(x, name):
        with tf.variable_scope(name):
            return tf.nn.sigmoid(tf.layers.conv2d(x, 1, 3))

    def generator(x, name):
        with tf.variable_scope(name):
            return tf.layers.conv2d(x, 3, 3)

    def discriminator(x, name):
        with tf.variable_scope(name):
            return tf.layers.conv2d(x, 1, 3)

    def get_outputs(inputs):
        images_a, images_b = inputs['images_a'], inputs['images_b']
        with tf.variable_scope("Model") as scope:
            mask_a = attention(images_a, "g_A_ae")
            mask_b = attention(images_b, "g_B_ae")
            real_a = discriminator(images_a, "d_A")
            real_b = discriminator(images_b, "d_B")
            fake_b = generator(images_a, "g_A") * mask_a + images_a * (1 - mask_a)
            fake_a = generator(images_b, "g_B") * mask_b + images_b * (1 - mask_b)
            scope.reuse_variables()
            fake_a_real = discriminator(fake_a, "d_A")
            fake_b_real = discriminator(fake_b, "d_B")
        return {'real_a': real_a, 'real_b': real_b,
                'fake_a_real': fake_a_real, 'fake_b_real': fake_b_real}
    """

# The two trainers of each generator, picked by the epoch (`%s`: the
# test and what each arm picks).
_MAIN = """\
    import tensorflow as tf
    import model

    class AGGAN:
        def model_setup(self):
            outputs = model.get_outputs({'images_a': self.a, 'images_b': self.b})
            self.real_a, self.real_b = outputs['real_a'], outputs['real_b']
            self.fake_a_real = outputs['fake_a_real']
            self.fake_b_real = outputs['fake_b_real']

        def compute_losses(self):
            g_loss_A = -tf.reduce_mean(self.fake_b_real)
            g_loss_B = -tf.reduce_mean(self.fake_a_real)
            d_loss_A = tf.reduce_mean(self.fake_a_real) - tf.reduce_mean(self.real_a)
            d_loss_B = tf.reduce_mean(self.fake_b_real) - tf.reduce_mean(self.real_b)
            optimizer = tf.train.AdamOptimizer(self.learning_rate, beta1=0.5)
            model_vars = tf.trainable_variables()
            d_A_vars = [v for v in model_vars if 'd_A' in v.name]
            g_A_vars = [v for v in model_vars if 'g_A/' in v.name]
            d_B_vars = [v for v in model_vars if 'd_B' in v.name]
            g_B_vars = [v for v in model_vars if 'g_B/' in v.name]
            g_Ae_vars = [v for v in model_vars if 'g_A_ae' in v.name]
            g_Be_vars = [v for v in model_vars if 'g_B_ae' in v.name]
            self.g_A_trainer = optimizer.minimize(g_loss_A, var_list=g_A_vars + g_Ae_vars)
            self.g_B_trainer = optimizer.minimize(g_loss_B, var_list=g_B_vars + g_Be_vars)
            self.g_A_trainer_bis = optimizer.minimize(g_loss_A, var_list=g_A_vars)
            self.g_B_trainer_bis = optimizer.minimize(g_loss_B, var_list=g_B_vars)
            self.d_A_trainer = optimizer.minimize(d_loss_A, var_list=d_A_vars)
            self.d_B_trainer = optimizer.minimize(d_loss_B, var_list=d_B_vars)

        def train(self):
            self.model_setup()
            self.compute_losses()
            with tf.Session() as sess:
                for epoch in range(sess.run(self.global_step), self._max_step):
                    %s
                    for i in range(self.max_images):
                        sess.run(to_train_A)
                        sess.run(self.d_B_trainer)
                        sess.run(to_train_B)
                        sess.run(self.d_A_trainer)
    """

_SWITCH = """if epoch < self._switch:
                        to_train_A = self.g_A_trainer
                        to_train_B = self.g_B_trainer
                    else:
                        to_train_A = self.g_A_trainer_bis
                        to_train_B = self.g_B_trainer_bis"""


def _found(choice, main=_MAIN):
  return scanned.in_project({"model.py": _MODEL, "main.py": main % choice})


def test_attention_dropped_from_the_switch_on_is_found():
  assert _found(_SWITCH) == [("var-list-filter", "main.py", 26),
                             ("var-list-filter", "main.py", 27)]


def test_attention_dropped_at_an_epoch_counted_from_the_bound_is_found():
  # The same range, written from the later side: `epoch >= switch`.
  choice = _SWITCH.replace("epoch < self._switch", "epoch >= self._switch")
  choice = choice.replace("self.g_A_trainer\n", "self.g_A_trainer_x\n")
  choice = choice.replace("self.g_B_trainer\n", "self.g_B_trainer_x\n")
  choice = choice.replace("self.g_A_trainer_bis", "self.g_A_trainer")
  choice = choice.replace("self.g_B_trainer_bis", "self.g_B_trainer")
  choice = choice.replace("self.g_A_trainer_x", "self.g_A_trainer_bis")
  choice = choice.replace("self.g_B_trainer_x", "self.g_B_trainer_bis")
  assert _found(choice) == [("var-list-filter", "main.py", 26),
                            ("var-list-filter", "main.py", 27)]


def test_the_narrower_step_before_the_bound_is_silent():
  # A warm-up of the translators, then the whole generators: nothing
  # stays fixed from some point on.
  choice = _SWITCH.replace("epoch < self._switch", "epoch >= self._switch")
  assert _found(choice) == []


def test_arms_picked_by_the_parity_of_the_epoch_are_silent():
  choice = _SWITCH.replace("epoch < self._switch", "epoch % 2 == 0")
  assert _found(choice) == []


def test_a_later_step_of_its_own_for_the_attention_is_silent():
  main = _MAIN.replace(
      "            self.d_A_trainer = ",
      "            self.att_trainer = optimizer.minimize(g_loss_A + g_loss_B,"
      " var_list=g_Ae_vars + g_Be_vars)\n"
      "            self.d_A_trainer = ").replace(
          "sess.run(self.d_A_trainer)",
          "sess.run(self.d_A_trainer)\n"
          "                        if epoch >= self._switch:\n"
          "                            sess.run(self.att_trainer)")
  assert _found(_SWITCH, main) == []


def test_the_two_steps_run_together_are_silent():
  # No test of the epoch: both trainers of a generator run every
  # batch, so the attention nets train throughout.
  choice = ("to_train_A = [self.g_A_trainer, self.g_A_trainer_bis]\n"
            "                    to_train_B = [self.g_B_trainer, "
            "self.g_B_trainer_bis]")
  assert _found(choice) == []


# A GAN whose generator is warmed up on a reconstruction loss, then
# trained against a discriminator that only then starts training: each
# range's steps train other losses, none a narrower list of one.
_WARM_GAN = """\
    import tensorflow as tf

    class GAN:
        def build(self, x, z):
            with tf.variable_scope("gen"):
                fake = tf.layers.dense(z, 64)
            with tf.variable_scope("disc", reuse=tf.AUTO_REUSE):
                d_fake = tf.layers.dense(fake, 1, name="out")
                d_real = tf.layers.dense(x, 1, name="out")
            rec_loss = tf.reduce_mean(tf.abs(fake - x))
            g_loss = -tf.reduce_mean(d_fake) + rec_loss
            d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
            t_vars = tf.trainable_variables()
            g_vars = [v for v in t_vars if 'gen' in v.name]
            d_vars = [v for v in t_vars if 'disc' in v.name]
            self.g_pre = tf.train.AdamOptimizer(1e-4).minimize(rec_loss, var_list=g_vars)
            self.g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
            self.d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)

        def train(self, sess):
            for step in range(self.max_step):
                if step < 1000:
                    sess.run(self.g_pre)
                else:
                    sess.run(self.d_op)
                    sess.run(self.g_op)
    """


def test_a_gan_warmed_up_before_its_discriminator_is_silent():
  assert scanned.found(_WARM_GAN) == []
