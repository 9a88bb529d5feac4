"""`tfpartial scan`'s `var-list-filter` on a model class whose step
trains one part (`self.gen.trainable_variables`) while a method runs
that part on something computed from another part: only the values of
another part's output feed the part; its size does not. A generative
replay scholar sizes the generator's noise from how many labels the
solver produced (`y.shape[0]`): the solver feeds nothing into the
generator, and the GAN's step stays silent
(cvlian/Deep-generative-replay, part 28). The twin stays found: a head
stepped alone over the backbone's features. The sources are synthetic,
in the shape of the real code."""

import textwrap

from tests.tools.scanned import in_text

_SCHOLAR = """\
    import numpy as np
    import tensorflow as tf
    class Scholar(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.gen = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            self.disc = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            self.sol = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            self.opt_gen = tf.keras.optimizers.Adam()
            self.opt_disc = tf.keras.optimizers.Adam()

        def step_generator(self, x_real):
            noise = tf.random.normal([8, 100])
            with tf.GradientTape() as t_gen, tf.GradientTape() as t_disc:
                x_fake = self.gen(noise, training=True)
                ld = tf.reduce_mean(self.disc(x_real) - self.disc(x_fake))
                lg = -tf.reduce_mean(self.disc(x_fake))
            grad_gen = t_gen.gradient(lg, self.gen.trainable_variables)
            grad_disc = t_disc.gradient(ld, self.disc.trainable_variables)
            self.opt_gen.apply_gradients(
                zip(grad_gen, self.gen.trainable_variables))
            self.opt_disc.apply_gradients(
                zip(grad_disc, self.disc.trainable_variables))

        def prepare_batch(self, x, y, batch_size=200):
            for i in range(0, 1000, batch_size):
                fake_samples = int(y.shape[0] / 9)
                noise = tf.random.normal([min(batch_size, fake_samples), 100])
                x_fake = self.gen(noise, training=False)
                y_fake = self.sol(x_fake, training=False).numpy()
                x = np.vstack([x, x_fake])
                y = np.vstack([y, y_fake])
            return x, y
    """

_HEAD = """\
    import tensorflow as tf
    class Classifier(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.backbone = tf.keras.Sequential([tf.keras.layers.Dense(16)])
            self.head = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            self.opt = tf.keras.optimizers.Adam()

        def call(self, x):
            features = self.backbone(x)
            return self.head(features)

        def train_step(self, data):
            x, y = data
            n = tf.shape(x)[0]
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self(x) - y)) / tf.cast(
                    n, tf.float32)
            grads = tape.gradient(loss, self.head.trainable_variables)
            self.opt.apply_gradients(
                zip(grads, self.head.trainable_variables))
    """


def test_a_part_sized_from_another_part_is_not_fed_by_it():
  assert in_text(textwrap.dedent(_SCHOLAR), "var-list-filter") == []


def test_a_head_stepped_over_the_backbone_stays_found():
  assert in_text(textwrap.dedent(_HEAD), "var-list-filter") == [
      ("var-list-filter", 19)]
