"""`tfpartial scan`'s `var-list-filter` on a stage whose loss reaches
another part through the forward path: the step trains its own part
(an encoder), whose output the model turns, in another part's scope
block (a generator that an earlier loop of the same function trained),
into what the loss reads, and no later loop trains that part again: it
stays fixed while the new part learns (f-AnoGAN's encoder training).
A GAN's halves alternating in one loop, a part that only supplies the
loss's targets, a part trained again by a later loop (pre-training,
then joint training) and a perceptual network no step trains stay
silent. Each source is synthetic, in the shape of real code (part
sixteen's f-AnoGAN)."""

import pytest

import scanned


def _found(files):
  return [(path, idiom, line)
          for idiom, path, line in scanned.in_project(files)]


# The model: a function building three scopes into a dict of outputs.
_MODEL = """\
    import tensorflow as tf

    def network(z, x):
      outputs = {}
      with tf.variable_scope('Encoder'):
        h = tf.layers.dense(x, 64)
        outputs['z_enc'] = z_enc = tf.nn.tanh(tf.layers.dense(h, 8))
      with tf.variable_scope('Generator'):
        dense = tf.layers.Dense(64)
        out = dense(z_enc)
        outputs['x_enc'] = tf.sigmoid(out)
        out = dense(z)
        outputs['x_'] = x_ = tf.sigmoid(out)
      with tf.variable_scope('Discriminator'):
        outputs['d_'] = tf.layers.dense(x_, 1)
        outputs['d'] = tf.layers.dense(x, 1, reuse=True)
      return outputs
    """

# The trainer: three steps, lists filtered by scope, run in loops.
_TRAINER = """\
    import tensorflow as tf
    from model import network

    class Trainer:
      def __init__(self, sess, x, z):
        self.sess, self.x, self.z = sess, x, z
        self.outputs = network(z, x)
        self.x_enc = self.outputs[%(read)s]
        self.d_ = self.outputs['d_']
        self.d = self.outputs['d']

      def train(self, epochs):
        enc_loss = tf.reduce_mean(tf.square(self.x - self.x_enc))
        gen_loss = -tf.reduce_mean(self.d_)
        disc_loss = tf.reduce_mean(self.d_) - tf.reduce_mean(self.d)
        t_vars = tf.trainable_variables()
        dis_vars = [v for v in t_vars if 'Discriminator' in v.name]
        gen_vars = [v for v in t_vars if 'Generator' in v.name]
        enc_vars = [v for v in t_vars if 'Encoder' in v.name]
        optim_dis = tf.train.AdamOptimizer().minimize(
            disc_loss, var_list=dis_vars)
        optim_gen = tf.train.AdamOptimizer().minimize(
            gen_loss, var_list=gen_vars)
        optim_enc = tf.train.AdamOptimizer().minimize(
            enc_loss, var_list=enc_vars)
        for epoch in range(epochs):
          self.sess.run(optim_gen)
          for _ in range(5):
            self.sess.run(optim_dis)
%(encoder)s
"""

_LATER_LOOP = """\
        for epoch in range(epochs):
          self.sess.run({'optimizer_enc': optim_enc})
"""
_SAME_LOOP = """\
          self.sess.run(optim_enc)
"""


def _project(read="'x_enc'", encoder=_LATER_LOOP, after=""):
  trainer = _TRAINER % {"read": read, "encoder": encoder} + after
  return {"model.py": _MODEL, "trainer.py": trainer}


# The generator trained once more after the encoder's loop: pre-training.
_JOINT = """\
        for epoch in range(epochs):
          self.sess.run(optim_gen)
          self.sess.run(optim_dis)
"""

# The model built in the trainer's own function, outputs by name.
_INLINE = """\
    import tensorflow as tf

    def train(sess, x, epochs):
      with tf.variable_scope('encoder'):
        code = tf.layers.dense(x, 8)
      with tf.variable_scope('decoder'):
        rebuilt = tf.layers.dense(%s, 64)
      loss_ae = tf.reduce_mean(tf.square(x - rebuilt))
      loss_code = tf.reduce_mean(tf.square(code - tf.stop_gradient(rebuilt)))
      dec_vars = [v for v in tf.trainable_variables() if 'decoder' in v.name]
      enc_vars = [v for v in tf.trainable_variables() if 'encoder' in v.name]
      opt_dec = tf.train.AdamOptimizer().minimize(loss_ae, var_list=dec_vars)
      opt_enc = tf.train.AdamOptimizer().minimize(loss_ae, var_list=enc_vars)
      for _ in range(epochs):
        sess.run(opt_dec)
      for _ in range(epochs):
        sess.run(opt_enc)
    """


POSITIVE = {
    # The encoder's loss reads the generator's output of the encoder's
    # code; the generator trained only in the earlier loop: it is fixed.
    "an encoder trained through a generator an earlier loop trained": (
        _project(), [("trainer.py", "var-list-filter", 19)]),
    # The same, the model built beside the steps, outputs by name.
    "an encoder trained through a decoder trained before, by name": (
        {"t.py": _INLINE % "code"}, [("t.py", "var-list-filter", 11)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_part_trained_through_one_trained_before_is_found(name):
  files, expected = POSITIVE[name]
  assert _found(files) == expected


NEGATIVE = {
    # The encoder's step in the GAN's loop: the halves alternate.
    "the three steps alternating in one loop": _project(
        encoder=_SAME_LOOP),
    # The loss reads the generator's output of the noise: a target.
    "a generator that only supplies the loss's target": _project(
        read="'x_'"),
    # A later loop trains the generator again: pre-training, then joint.
    "a part trained again after the step's loop": _project(after=_JOINT),
    # The decoder reads the input, not the code: a part of its own.
    "a decoder beside the encoder": {"t.py": _INLINE % "x"},
    # A perceptual network no step trains, its weights restored.
    "a restored perceptual network on the path": {"t.py": """\
        import tensorflow as tf

        def train(sess, x, epochs):
          with tf.variable_scope('net'):
            y = tf.layers.dense(x, 8)
          with tf.variable_scope('vgg'):
            feats = tf.layers.dense(y, 64)
          loss = tf.reduce_mean(tf.square(feats))
          net_vars = [v for v in tf.trainable_variables() if 'net' in v.name]
          vgg_vars = [v for v in tf.global_variables() if 'vgg' in v.name]
          tf.train.Saver(vgg_vars).restore(sess, 'vgg.ckpt')
          opt = tf.train.AdamOptimizer().minimize(loss, var_list=net_vars)
          for _ in range(epochs):
            sess.run(opt)
        """},
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_part_trained_with_or_not_on_the_path_is_silent(name):
  assert _found(NEGATIVE[name]) == []
