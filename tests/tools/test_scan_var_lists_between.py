"""`tfpartial scan`'s `var-list-filter` on a part that no step trains
between two parts that steps train: a miner's step trains the small
network that feeds a pretrained generator, the discriminator on the
generator's output has its own step, and the generator's variables,
named by the same filter (to restore them), are left out. The
look-alikes stay silent: a GAN's two halves, a perceptual loss's
network (its output reaches only the loss), a teacher beside the
student. Synthetic sources in the shape of real code (part fourteen)."""

import pytest

import scanned

_NETS = """\
    def Miner(n):
      noise = tf.random_normal([n, 4])
      return lib.ops.linear.Linear('%s_Miner.1' % ID, 4, 128, noise)

    def Generator(n, noise=None):
      out = lib.ops.linear.Linear('%s_Generator.1' % ID, 128, 784, noise)
      return tf.nn.sigmoid(out)

    def Discriminator(x):
      return lib.ops.linear.Linear('%s_Discriminator.1' % ID, 784, 1, x)

"""


def _found(text):
  return [(idiom, line) for idiom, _, line in scanned.in_project(text)]


POSITIVE = {
    # The generator, restored, sits between the miner and the
    # discriminator; the miner's step trains only the miner.
    "a pretrained generator between a miner and its discriminator": (
        _NETS + """\
    real = tf.placeholder(tf.float32, [50, 784])
    fake = Generator(50, noise=Miner(50))
    disc_real = Discriminator(real)
    disc_fake = Discriminator(fake)
    gen_params = lib.params_with_name('%s_Miner' % ID)
    disc_params = lib.params_with_name('%s_Discriminator' % ID)
    pretrained = [p for p in lib.params_with_name('%s_Generator' % ID)]
    gen_cost = -tf.reduce_mean(disc_fake)
    disc_cost = tf.reduce_mean(disc_fake) - tf.reduce_mean(disc_real)
    between = real + 0.5 * (fake - real)
    slopes = tf.gradients(Discriminator(between), [between])[0]
    disc_cost += tf.reduce_mean((tf.norm(slopes) - 1.) ** 2)
    gen_op = tf.train.AdamOptimizer(1e-4).minimize(gen_cost, var_list=gen_params)
    disc_op = tf.train.AdamOptimizer(1e-4).minimize(disc_cost, var_list=disc_params)
    saver = tf.train.Saver(pretrained)
    """, [("var-list-filter", 16)]),
}

NEGATIVE = {
    # A GAN: each half has its own step, nothing between them.
    "a GAN's two halves, each filtered": _NETS + """\
    real = tf.placeholder(tf.float32, [50, 784])
    fake = Generator(50, noise=tf.random_normal([50, 128]))
    disc_real = Discriminator(real)
    disc_fake = Discriminator(fake)
    gen_params = lib.params_with_name('%s_Generator' % ID)
    disc_params = lib.params_with_name('%s_Discriminator' % ID)
    gen_cost = -tf.reduce_mean(disc_fake)
    disc_cost = tf.reduce_mean(disc_fake) - tf.reduce_mean(disc_real)
    gen_op = tf.train.AdamOptimizer(1e-4).minimize(gen_cost, var_list=gen_params)
    disc_op = tf.train.AdamOptimizer(1e-4).minimize(disc_cost, var_list=disc_params)
    """,
    # A perceptual loss: the restored network reads the generator's
    # output and feeds only the loss, no trained part.
    "a restored network that only measures the output": _NETS + """\
    real = tf.placeholder(tf.float32, [50, 784])
    fake = Miner(50)
    disc_real = Discriminator(real)
    disc_fake = Discriminator(fake)
    feat = Generator(50, noise=fake)
    gen_params = lib.params_with_name('%s_Miner' % ID)
    disc_params = lib.params_with_name('%s_Discriminator' % ID)
    pretrained = lib.params_with_name('%s_Generator' % ID)
    gen_cost = -tf.reduce_mean(disc_fake) + tf.reduce_mean(feat)
    disc_cost = tf.reduce_mean(disc_fake) - tf.reduce_mean(disc_real)
    gen_op = tf.train.AdamOptimizer(1e-4).minimize(gen_cost, var_list=gen_params)
    disc_op = tf.train.AdamOptimizer(1e-4).minimize(disc_cost, var_list=disc_params)
    saver = tf.train.Saver(pretrained)
    """,
    # The restored generator is trained too, by a step of its own.
    "a generator between them with a step of its own": _NETS + """\
    real = tf.placeholder(tf.float32, [50, 784])
    fake = Generator(50, noise=Miner(50))
    disc_real = Discriminator(real)
    disc_fake = Discriminator(fake)
    gen_params = lib.params_with_name('%s_Miner' % ID)
    disc_params = lib.params_with_name('%s_Discriminator' % ID)
    g_params = lib.params_with_name('%s_Generator' % ID)
    gen_cost = -tf.reduce_mean(disc_fake)
    disc_cost = tf.reduce_mean(disc_fake) - tf.reduce_mean(disc_real)
    gen_op = tf.train.AdamOptimizer(1e-4).minimize(gen_cost, var_list=gen_params)
    g_op = tf.train.AdamOptimizer(1e-4).minimize(gen_cost, var_list=g_params)
    disc_op = tf.train.AdamOptimizer(1e-4).minimize(disc_cost, var_list=disc_params)
    """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_part_between_trained_parts_is_left_out(name):
  text, expected = POSITIVE[name]
  assert _found(text) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_halves_and_measuring_networks_stay_silent(name):
  assert _found(NEGATIVE[name]) == []
