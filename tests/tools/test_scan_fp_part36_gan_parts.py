"""`tfpartial scan` on part 36's GAN of tiles (prathamesh-88/gan-image-
compression, archive/tiles_gan.py): the model's `call` runs its
generator on a pretrained encoder's features, but its `train_step` feeds
the generator noise (of the encoder's output shape: a size read, no
run); the generator's step never runs the encoder, so
its loss reaches nothing the step leaves out: no `var-list-filter`.
The twins stay findings: a generator fine-tuned on the encoder's
output, run in the step directly, through the whole model (`self(x)`)
or through a method of the class, leaves the encoder out."""

import pytest

import scanned

_GAN = """\
    import tensorflow as tf
    from tensorflow import keras


    class TileGAN(keras.Model):
      def __init__(self, generator, discriminator, encoder):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.encoder = encoder

      def call(self, inputs):
        return self.generator(self.encoder(inputs))

      def generate(self, images):
        return self.generator(self.encoder(images))

      def train_step(self, real):
        latent = {latent}
        fake = self.generator(latent)
        with tf.GradientTape() as disc_tape:
          d_loss = self.loss_fn(self.discriminator([fake, real]))
        weights = self.discriminator.trainable_weights
        grads = disc_tape.gradient(d_loss, weights)
        self.d_optimizer.apply_gradients(zip(grads, weights))
        with tf.GradientTape() as gen_tape:
          g_loss = self.loss_fn(self.discriminator([{fake}, real]))
        grads = gen_tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(
            zip(grads, self.generator.trainable_weights))
        return {{}}
    """

CASES = {
    # prathamesh-88: the generator fed noise; the encoder only in `call`.
    "a GAN's generator fed noise beside an encoder run only by call": (
        _GAN.format(latent="tf.random.normal((8, 4, 4, 16))",
                    fake="self.generator(latent)"), []),
    "a GAN's generator fed noise of the encoder's output shape": (
        _GAN.format(
            latent="tf.random.normal((8, *self.encoder.output_shape[1:]))",
            fake="self.generator(latent)"), []),
    "a GAN's generator fed a noise tensor held in a name": (
        _GAN.format(latent="tf.random.uniform((8, 16))",
                    fake="fake"), []),
    # The twins: the step runs the encoder and trains only the generator.
    "a generator fine-tuned on the encoder's output in the step": (
        _GAN.format(latent="tf.random.normal((8, 4, 4, 16))",
                    fake="self.generator(self.encoder(real))"),
        [("var-list-filter", 23), ("var-list-filter", 28)]),
    "a generator fine-tuned through the whole model": (
        _GAN.format(latent="tf.random.normal((8, 4, 4, 16))",
                    fake="self(real)"), [("var-list-filter", 28)]),
    "a generator fine-tuned through a method of the class": (
        _GAN.format(latent="tf.random.normal((8, 4, 4, 16))",
                    fake="self.generate(real)"), [("var-list-filter", 28)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_generator_step_beside_an_encoder(name):
  code, expected = CASES[name]
  assert scanned.in_text(code, "var-list-filter") == expected
