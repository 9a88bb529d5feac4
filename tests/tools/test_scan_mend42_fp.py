"""`tfpartial scan` after the review of t59-fp's two rules.

A `fit` (or `train_on_batch`) is no train step only on an object of a
library known to fit data (SciPy's `norm.fit`, `stats.norm.fit`):
a model imported from a module that is not scanned, or from a wrapper
package of Keras, still trains, and a write into it before its `fit` is
a finding; other step names (`trainer.train_step`) are never read as a
library's fit. A part step of a model class leaves out the part below
whenever its method may run it, however indirectly: a base class's
method, a property, a module helper given a list of parts, a partial of
a method, `self` under another name, `self.layers`, a dict of parts."""

import pytest

import scanned

_FITTED = {
    # A model of the user's own module, scanned alone.
    "a model imported from a module not scanned": ("""\
        import numpy as np
        import scipy.stats as st
        from nets import net

        for epoch in range(10):
          w = net.get_weights()
          w[0] = w[0] * mask
          net.set_weights(w)
          net.fit(x, y, epochs=1)
          mu, sigma = st.norm.fit(w[0].ravel())
        """, [("weight-remask", 8)]),
    "a model of a module imported whole": ("""\
        import numpy as np
        import my_models as M

        for epoch in range(10):
          w = M.net.get_weights()
          w[0] = w[0] * mask
          M.net.set_weights(w)
          M.net.fit(x, y, epochs=1)
        """, [("weight-remask", 7)]),
    "a model of a wrapper package of Keras": ("""\
        import numpy as np
        import tensorflow_addons as tfa
        from keras_hub_zoo import unet

        for epoch in range(10):
          w = unet.get_weights()
          w[0] = w[0] * mask
          unet.set_weights(w)
          unet.fit(x, y)
        """, [("weight-remask", 8)]),
    "a trainer's own step, imported": ("""\
        import numpy as np
        from my_trainer import trainer

        for epoch in range(10):
          trainer.train_step(batch)
          w = trainer.model.get_weights()
          w[0] = w[0] * mask
          trainer.model.set_weights(w)
        """, [("weight-remask", 8)]),
    # The twins: a library fitting data trains no model.
    "a scipy distribution fitted after the write": ("""\
        import numpy as np
        from scipy import stats
        from keras.models import load_model

        for path in paths:
          model = load_model(path)
          w = model.get_weights()
          w[0] = w[0] * mask
          model.set_weights(w)
          stats.norm.fit(w[0].ravel())
        """, []),
}


@pytest.mark.parametrize("name", sorted(_FITTED))
def test_a_fit_after_a_masked_write(name):
  code, expected = _FITTED[name]
  assert scanned.in_text(code, "weight-remask") == expected


_GAN = """\
    import functools
    import tensorflow as tf
    from tensorflow import keras
    {helper}

    class TileGAN({base}):
      def __init__(self, generator, discriminator, encoder):
        super().__init__()
        self.generator = generator
        self.discriminator = discriminator
        self.encoder = encoder
        {held}

      def call(self, inputs):
        return self.generator(self.encoder(inputs))

      {method}

      def train_step(self, real):
        {before}
        with tf.GradientTape() as gen_tape:
          g_loss = self.loss_fn(self.discriminator([{fake}, real]))
        grads = gen_tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(
            zip(grads, self.generator.trainable_weights))
        return {{}}
    """


def _gan(fake, helper="", base="keras.Model", held="pass",
         method="pass", before="pass"):
  return _GAN.format(fake=fake, helper=helper, base=base, held=held,
                     method=method, before=before)


_BASE = """\

    class Base(keras.Model):
      def generate(self, x):
        return self.generator(self.encoder(x))
    """

_SEQ = """\

    def _seq(fs, x):
      for f in fs:
        x = f(x)
      return x
    """

_PARTS = {
    "a method of a base class of the project": (
        _gan("self.generate(real)", helper=_BASE, base="Base"), 27),
    "a property running the encoder": (
        _gan("self.generator(self.features)",
             method="@property\n      def features(self):\n"
             "        return self.encoder(self.x)"), 25),
    "a module helper given a list of the parts": (
        _gan("_seq(self.stack, real)", helper=_SEQ,
             held="self.stack = [self.encoder, self.generator]"), 28),
    "a partial of a method held in an attribute": (
        _gan("self.gen(real)",
             held="self.gen = functools.partial(TileGAN.generate, self)",
             method="def generate(self, x):\n"
             "        return self.generator(self.encoder(x))"), 24),
    "the model under another name": (
        _gan("model(real)", before="model = self"), 23),
    "the model's own layers": (
        _gan("self.generator(x)",
             before="x = real\n        for layer in self.layers[:1]:\n"
             "          x = layer(x)"), 25),
    "a dict of the parts": (
        _gan("self.generator(self.parts['enc'](real))",
             held="self.parts = {'enc': encoder}"), 23),
}


@pytest.mark.parametrize("name", sorted(_PARTS))
def test_a_generator_step_running_the_encoder_indirectly(name):
  code, line = _PARTS[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]


def test_a_generator_fed_noise_beside_the_same_shapes_stays_silent():
  """The twin: the step of each shape runs only the generator."""
  assert scanned.in_text(_gan(
      "self.generator(tf.random.normal((8, 16)))",
      held="self.stack = [self.generator]",
      method="@property\n      def size(self):\n"
      "        return self.encoder.output_shape"), "var-list-filter") == []


def test_a_generator_reloaded_from_a_path_given_stays_silent():
  """prathamesh-88: `load(self, path)` sets the generator anew from a
  file; the path is no part, so the step runs the generator alone."""
  assert scanned.in_text(_gan(
      "self.generator(tf.random.normal((8, 16)))",
      method="def load(self, path):\n"
      "        self.generator = load_model(os.path.join(path, 'g.h5'))"),
      "var-list-filter") == []


def _generators_fed_noise(n):
  """One model: `n` generators, each fine-tuned by its own tape in
  `train_step` on noise, and `call` running each on its own encoder."""
  return ("import tensorflow as tf\n\nclass M(tf.keras.Model):\n"
          "  def __init__(self):\n    super().__init__()\n" + "".join(
              f"    self.gen{i} = G()\n    self.enc{i} = E()\n"
              for i in range(n)) + "  def call(self, x):\n" + "".join(
                  f"    y{i} = self.gen{i}(self.enc{i}(x))\n"
                  for i in range(n)) + "    return x\n"
          "  def train_step(self, x):\n" + "".join(
              f"    with tf.GradientTape() as t{i}:\n"
              f"      l{i} = tf.reduce_mean(self.gen{i}("
              f"tf.random.normal((8, 4))))\n"
              f"    g{i} = t{i}.gradient(l{i}, "
              f"self.gen{i}.trainable_variables)\n"
              f"    self.opt.apply_gradients(zip(g{i}, "
              f"self.gen{i}.trainable_variables))\n"
              for i in range(n)) + "    return {}\n")


@pytest.mark.parametrize("where", ["_part_of_self.py", ""])
def test_what_a_step_may_run_is_read_once_per_method(where):
  """Four times the generators, about four times the work, not sixteen."""
  n = 10
  small, large = (scanned.scan_work(_generators_fed_noise(k), where)
                  for k in (n, 4 * n))
  assert large <= 6 * small, (small, large)


def test_generators_fed_noise_leave_nothing_out():
  assert scanned.found(_generators_fed_noise(3)) == []
