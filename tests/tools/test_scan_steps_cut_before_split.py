"""`tfpartial scan`'s `var-list-filter` on a split into halves taken from
a list cut before the split (part thirty, Youngjung/im2txt): an
adversarial captioner takes the trainable variables less its pretrained
encoder (`vars_all = [v for v in tf.trainable_variables() if v not in
model.inception_variables]`) and splits only that list into the
generator's and the discriminator's (`optimize_loss(..., variables=
g_vars)`, `variables=d_vars`): the encoder trains in neither. Silent
twins: halves drawn from every trainable variable, a cut whose list
another step trains, an actor-critic pair drawn from one uncut list, and
a GAN whose generator is what is not the discriminator."""

from tests.tools import scanned

_CAPTIONER = """
import tensorflow as tf
import tensorflow.contrib.slim as slim


class Model(object):
    def build(self, images, seqs):
        with tf.variable_scope('InceptionV3'):
            feats = slim.conv2d(images, 32, [3, 3])
        self.inception_variables = tf.get_collection(
            tf.GraphKeys.GLOBAL_VARIABLES, scope='InceptionV3')
        with tf.variable_scope('lstm'):
            out = tf.layers.dense(tf.reduce_mean(feats) + seqs, 100)
        with tf.variable_scope('discr'):
            score = tf.layers.dense(out, 1)
        self.nll = tf.reduce_mean(out)
        self.d_loss = tf.reduce_mean(score)
        self.g_loss = -tf.reduce_mean(score)


def main(images, seqs):
    model = Model()
    model.build(images, seqs)
    step = tf.train.get_or_create_global_step()
    vars_all = [v for v in tf.trainable_variables()
                if v not in model.inception_variables]
    d_vars = [v for v in vars_all if 'discr' in v.name]
    g_vars = [v for v in vars_all if 'discr' not in v.name]
    nll_op = tf.contrib.layers.optimize_loss(
        loss=model.nll, global_step=step, learning_rate=0.1,
        optimizer='SGD', variables=g_vars)
    d_op = tf.contrib.layers.optimize_loss(
        loss=model.d_loss, global_step=step, learning_rate=0.1,
        optimizer='SGD', variables=d_vars)
    g_op = tf.contrib.layers.optimize_loss(
        loss=model.nll + model.g_loss, global_step=step, learning_rate=0.1,
        optimizer='SGD', variables=g_vars)
    EXTRA
    return nll_op, d_op, g_op
"""


def test_halves_of_a_list_cut_of_the_encoder_are_found_at_the_cut():
  assert scanned.found(_CAPTIONER.replace("EXTRA", "pass")) == [
      ("var-list-filter", 25)]


def test_a_cut_of_a_list_chosen_by_slim_is_found_at_the_cut():
  # fr3-cutv: the encoder's list chosen by slim's restore helper.
  old = ("tf.get_collection(\n            "
         "tf.GraphKeys.GLOBAL_VARIABLES, scope='InceptionV3')")
  base = _CAPTIONER.replace("EXTRA", "pass")
  assert old in base
  code = base.replace(
      old, "slim.get_variables_to_restore(include=['InceptionV3'])")
  assert scanned.found(code) == [("var-list-filter", 24)]


def test_halves_of_every_trainable_variable_stay_silent():
  code = _CAPTIONER.replace(
      "                if v not in model.inception_variables]", "]").replace(
          "EXTRA", "pass")
  assert scanned.found(code) == []


def test_a_cut_whose_list_another_step_trains_stays_silent():
  code = _CAPTIONER.replace(
      "EXTRA", "enc_op = tf.contrib.layers.optimize_loss(\n"
      "        loss=model.nll, global_step=step, learning_rate=0.1,\n"
      "        optimizer='SGD', variables=model.inception_variables)")
  assert scanned.found(code) == []


_ACTOR_CRITIC = """
import tensorflow as tf


def build(obs, act, ret):
    with tf.variable_scope('actor'):
        pi = tf.layers.dense(obs, 4)
    with tf.variable_scope('critic'):
        q = tf.layers.dense(tf.concat([obs, pi], 1), 1)
    params = [v for v in tf.trainable_variables()]
    pi_vars = [v for v in params if 'actor' in v.name]
    q_vars = [v for v in params if 'critic' in v.name]
    pi_op = tf.train.AdamOptimizer(1e-4).minimize(-tf.reduce_mean(q),
                                                 var_list=pi_vars)
    q_op = tf.train.AdamOptimizer(1e-3).minimize(
        tf.reduce_mean((q - ret) ** 2), var_list=q_vars)
    return pi_op, q_op
"""


def test_an_actor_critic_pair_of_one_uncut_list_stays_silent():
  assert scanned.found(_ACTOR_CRITIC) == []


_COMPLEMENT = """
import tensorflow as tf


def build(z, x):
    with tf.variable_scope('generator'):
        fake = tf.layers.dense(z, 784)
    with tf.variable_scope('discriminator'):
        d_real = tf.layers.dense(x, 1, name='d')
        d_fake = tf.layers.dense(fake, 1, name='d', reuse=True)
    t_vars = tf.trainable_variables()
    d_vars = [v for v in t_vars if 'discriminator' in v.name]
    g_vars = [v for v in t_vars if v not in d_vars]
    d_op = tf.train.AdamOptimizer(1e-4).minimize(
        tf.reduce_mean(d_fake - d_real), var_list=d_vars)
    g_op = tf.train.AdamOptimizer(1e-4).minimize(
        -tf.reduce_mean(d_fake), var_list=g_vars)
    return d_op, g_op
"""


def test_a_generator_as_what_is_not_the_discriminator_stays_silent():
  assert scanned.found(_COMPLEMENT) == []
