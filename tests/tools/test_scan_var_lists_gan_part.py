"""`tfpartial scan`'s `var-list-filter` in a GAN whose generator's (or
discriminator's) list a flag of the function that builds the lists
narrows to part of itself (zi2zi's `retrieve_trainable_vars`: with
`freeze_encoder` set, the `g_e` variables leave `g_vars`; part thirty's
font-transfer forks): the step trains part of its own half. A GAN whose
halves are each whole stays silent. Each source is synthetic."""

import textwrap

import scanned

_ZI2ZI = """\
    import tensorflow as tf


    class UNet(object):

      def generator(self, images):
        with tf.variable_scope("generator"):
          e1 = conv2d(images, 64, scope="g_e1_conv")
          return deconv2d(e1, 1, scope="g_d1_deconv")

      def discriminator(self, image):
        with tf.variable_scope("discriminator"):
          h0 = conv2d(image, 64, scope="d_h0_conv")
          return fc(h0, 1, scope="d_fc1")

      def retrieve_trainable_vars(self, freeze_encoder=False):
        t_vars = tf.trainable_variables()
        d_vars = [var for var in t_vars if 'd_' in var.name]
        g_vars = [var for var in t_vars if 'g_' in var.name]
        if freeze_encoder:
          g_vars = [var for var in g_vars if not ("g_e" in var.name)]
        return g_vars, d_vars

      def train(self, lr=0.0002, freeze_encoder=False):
        g_vars, d_vars = self.retrieve_trainable_vars(
            freeze_encoder=freeze_encoder)
        d_optimizer = tf.train.AdamOptimizer(lr).minimize(
            self.d_loss, var_list=d_vars)
        g_optimizer = tf.train.AdamOptimizer(lr).minimize(
            self.g_loss, var_list=g_vars)
        for step in range(100):
          self.sess.run([d_optimizer, g_optimizer])
    """


def test_a_flag_dropping_the_encoder_from_the_generator_is_found():
  assert scanned.found(_ZI2ZI) == [("var-list-filter", 21)]


def test_the_plain_generator_and_discriminator_split_is_silent():
  text = _ZI2ZI.replace(
      "        if freeze_encoder:\n"
      "          g_vars = [var for var in g_vars if not (\"g_e\" in var.name)]\n",
      "")
  assert scanned.found(text) == []


def test_a_flag_narrowing_the_discriminator_to_its_head_is_found():
  text = _ZI2ZI.replace(
      "g_vars = [var for var in g_vars if not (\"g_e\" in var.name)]",
      "g_vars = [var for var in t_vars if \"embedding\" in var.name]\n"
      "          d_vars = [var for var in d_vars if \"d_fc\" in var.name]")
  assert scanned.found(text) == [("var-list-filter", 22)]


def test_a_flag_no_caller_passes_is_silent():
  text = _ZI2ZI.replace("freeze_encoder=freeze_encoder)",
                        "freeze_encoder=False)")
  assert scanned.found(text) == []


def test_a_narrowing_by_name_that_no_flag_chooses_is_silent():
  # Not chosen by a flag: the generator's list is kept once, narrowed
  # for a reason the code does not show (a name clash of `d_`).
  text = _ZI2ZI.replace(
      "        if freeze_encoder:\n"
      "          g_vars = [var for var in g_vars if not (\"g_e\" in var.name)]\n",
      "        d_vars = [var for var in d_vars if 'generator' not in var.name]\n")
  assert scanned.found(text) == []


_EXTENDED = """\
    import tensorflow as tf


    class Net(object):

      def retrieve_trainable_vars(self, freeze_encoder=False,
                                  freeze_decoder=False, freeze_dis=False):
        t_vars = tf.trainable_variables()
        dis_vals = [var for var in t_vars if 'dis_' in var.name]
        enc_vals = [var for var in t_vars if 'gen_enc' in var.name]
        dec_vals = [var for var in t_vars if 'gen_dec' in var.name]
        gen_vars = list()
        dis_vars = list()
        if freeze_encoder == 0:
          gen_vars.extend(enc_vals)
        if freeze_decoder == 0:
          gen_vars.extend(dec_vals)
        if freeze_dis == 0:
          dis_vars.extend(dis_vals)
        return gen_vars, dis_vars

      def build(self, lr):
        _, d_vars = self.retrieve_trainable_vars(
            freeze_encoder=self.freeze_encoder,
            freeze_decoder=self.freeze_decoder, freeze_dis=self.freeze_dis)
        self.d_op = tf.train.AdamOptimizer(lr).minimize(
            self.d_loss, var_list=d_vars)
        g_vars, _ = self.retrieve_trainable_vars(
            freeze_encoder=self.freeze_encoder,
            freeze_decoder=self.freeze_decoder, freeze_dis=self.freeze_dis)
        self.g_op = tf.train.AdamOptimizer(lr).minimize(
            self.g_loss, var_list=g_vars)
        g_vars, _ = self.retrieve_trainable_vars(
            freeze_encoder=self.freeze_encoder,
            freeze_decoder=self.freeze_decoder, freeze_dis=self.freeze_dis)
        self.g_again = tf.train.AdamOptimizer(lr).minimize(
            self.g_loss, var_list=g_vars)
    """


def test_generator_parts_added_only_without_their_freeze_flag_are_found():
  # The discriminator's one part, dropped, is the whole half: no part.
  assert scanned.found(_EXTENDED) == [("var-list-filter", 14)]


def test_generator_parts_always_added_are_silent():
  text = _EXTENDED.replace("        if freeze_encoder == 0:\n  ", "").replace(
      "        if freeze_decoder == 0:\n  ", "")
  assert scanned.found(text) == []


_HALVES = """\
    import tensorflow as tf


    def build(g_loss, d_loss, e_loss, lr, {params}):
      t_vars = tf.trainable_variables()
      g_vars = [v for v in t_vars if 'Generator' in v.name]
      d_vars = [v for v in t_vars if 'Discriminator' in v.name]
      e_vars = [v for v in t_vars if 'Encoder' in v.name]
      {body}
      opt_d = tf.train.RMSPropOptimizer(lr).minimize(d_loss, var_list=d_vars)
      opt_g = tf.train.RMSPropOptimizer(lr).minimize(g_loss, var_list=g_vars)
      opt_e = tf.train.RMSPropOptimizer(lr).minimize(e_loss, var_list=e_vars)
      return opt_d, opt_g, opt_e


    def main(args):
      return build(1.0, 2.0, 3.0, 1e-4, {call})
    """


def _halves(params="ema=False", body="pass", call="ema=args.ema"):
  return _HALVES.format(params=params, body=body, call=call)


def test_a_vae_gan_with_three_whole_lists_is_silent():
  assert scanned.found(_halves()) == []


def test_a_flag_choosing_an_average_of_a_half_is_silent():
  # The flag adds to what trains nowhere (a shadow of the generator):
  # no half narrowed.
  body = ("if ema:\n"
          "        avg = tf.train.ExponentialMovingAverage(0.999)\n"
          "        keep = avg.apply(g_vars)")
  assert scanned.found(_halves(body=body)) == []


def test_a_cyclegan_flag_choosing_one_generator_is_silent():
  # Both generators trained at once or one at a time: each list whole.
  body = ("if ema:\n"
          "        g_vars = [v for v in t_vars if 'Generator_A' in v.name"
          " or 'Generator_B' in v.name]")
  assert scanned.found(_halves(body=body)) == []


_NAME_SCOPED = {
    "model.py": """\
        import tensorflow as tf


        class VAWGAN(object):

          def __init__(self, arch):
            with tf.{scope}('Generator'):
              self.y_emb = self._unit_embedding(arch['y_dim'], 'y_embedding')
            self._generate = tf.make_template('Generator', self._generator)
            self._discriminate = tf.make_template('Discriminator', self._disc)
            self._encode = tf.make_template('Encoder', self._encoder)

          def _unit_embedding(self, n_class, scope_name):
            with tf.variable_scope(scope_name):
              table = tf.get_variable(name='y_emb', shape=[n_class, 16])
            return tf.nn.l2_normalize(table, dim=-1)

          def _generator(self, z, y):
            y = tf.nn.embedding_lookup(self.y_emb, y)
            return tf.layers.dense(tf.concat([z, y], -1), 513)
        """,
    "trainer.py": """\
        import tensorflow as tf


        def optimize(loss, lr):
          trainables = tf.trainable_variables()
          g_vars = [v for v in trainables if 'Generator' in v.name]
          d_vars = [v for v in trainables if 'Discriminator' in v.name]
          e_vars = [v for v in trainables if 'Encoder' in v.name]
          opt_d = tf.train.RMSPropOptimizer(lr).minimize(
              loss['d'], var_list=d_vars)
          opt_g = tf.train.RMSPropOptimizer(lr).minimize(
              loss['g'], var_list=g_vars)
          opt_e = tf.train.RMSPropOptimizer(lr).minimize(
              loss['e'], var_list=e_vars)
          return opt_d, opt_g, opt_e
        """,
}


def _name_scoped(scope):
  return {path: text.replace("{scope}", scope)
          for path, text in _NAME_SCOPED.items()}


def test_tables_made_under_the_generators_name_scope_are_found():
  assert scanned.in_project(_name_scoped("name_scope")) == [
      ("var-list-filter", "trainer.py", 6)]


def test_tables_made_under_the_generators_variable_scope_are_silent():
  assert scanned.in_project(_name_scoped("variable_scope")) == []


def test_a_name_scope_making_no_variable_is_silent():
  files = _name_scoped("name_scope")
  files["model.py"] = files["model.py"].replace(
      "table = tf.get_variable(name='y_emb', shape=[n_class, 16])",
      "table = tf.one_hot(tf.range(n_class), 16)")
  assert scanned.in_project(files) == []


def test_a_name_scope_no_filter_keeps_is_silent():
  files = _name_scoped("name_scope")
  files["model.py"] = files["model.py"].replace(
      "tf.name_scope('Generator')", "tf.name_scope('Speaker')")
  assert scanned.in_project(files) == []


def test_the_name_scope_finding_says_get_variable_ignores_it():
  sources = [scanned._files.Source(path, textwrap.dedent(text))
             for path, text in _name_scoped("name_scope").items()]
  findings, _ = scanned._scan.scan_project(sources)
  assert [f.line for f in findings] == [6]
  assert "`get_variable` ignores `tf.name_scope('Generator')` (model.py:7)" in (
      findings[0].drift)


def test_a_flag_training_the_latent_code_alone_is_silent():
  # GAN inversion: the flag swaps the list for the latent code.
  text = _ZI2ZI.replace(
      "g_vars = [var for var in g_vars if not (\"g_e\" in var.name)]",
      "g_vars = [self.z]")
  assert scanned.found(text) == []


def test_a_flag_choosing_a_restore_of_the_encoder_is_silent():
  # Only a restore reads the narrowed list; the step trains g_vars whole.
  text = _ZI2ZI.replace(
      "g_vars = [var for var in g_vars if not (\"g_e\" in var.name)]",
      "self.saver = tf.train.Saver(\n"
      "              [var for var in g_vars if \"g_e\" in var.name])")
  assert scanned.found(text) == []


def test_progressive_growing_adding_blocks_by_stage_is_silent():
  text = _EXTENDED.replace("if freeze_encoder == 0:",
                           "if freeze_encoder >= 1:").replace(
      "if freeze_decoder == 0:", "if freeze_decoder >= 2:")
  assert scanned.found(text) == []


def test_a_step_counter_made_under_the_name_scope_is_silent():
  files = _name_scoped("name_scope")
  files["model.py"] = files["model.py"].replace(
      "table = tf.get_variable(name='y_emb', shape=[n_class, 16])",
      "table = tf.get_variable(name='y_emb', shape=[n_class, 16],\n"
      "                                    trainable=False)")
  assert scanned.in_project(files) == []
