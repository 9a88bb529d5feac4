"""`tfpartial scan` stays silent on TF2 GANs whose sub-models each get
their own step (part thirty-seven's negatives), and still finds a head
trained on a backbone no step trains.

Two forms were reported as var-list-filter. A Keras model class whose
generator and discriminator steps feed each network through a supplier
object of the project that makes no weights (`self.supplier(x, d)`
picking some of its arguments): the supplier was taken for a part below
that no step trains. It is no part: what runs below it is judged instead
(`_part_of_self`). And a function that trains a GAN, then an inference
network on the generator's outputs as targets, batched by a data helper
returning a tuple (`x, y = batch(xs, fake, n)`), with the model classes
defined inside the function: the tuple's targets and the class methods'
local names were both read as the inference network's input
(`_unpacked`, `_stage_marks.definitions`). The twins feed the untrained
network into the trained one and are found. Synthetic sources.
"""

import textwrap

import pytest
import scanned

# A class of the project that makes no weights: it picks its arguments.
_SUPPLIER = """\
    class Supplier:
      def __init__(self, n):
        self.n = n

      def __call__(self, *args):
        return args[:self.n]

    class Holder:
      def __init__(self, net):
        self.net = net

      def __call__(self, *args):
        return self.net(args[0])
    """

_GAN_CLASS = """\
    import tensorflow as tf
    from supply import Holder, Supplier

    class Gan(tf.keras.Model):
      def __init__(self, n):
        super().__init__()
        self.pick_g = Supplier(n)
        self.pick_d = {pick_d}
        self.encoder = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        self.generator = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        self.discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        self.g_opt = tf.keras.optimizers.Adam()
        self.d_opt = tf.keras.optimizers.Adam()

      @tf.function
      def train_step(self, x, d):
        with tf.GradientTape() as d_tape:
          fake = self.generator(self.pick_g(x, d))
          real = self.discriminator(self.pick_d({real_input}, x))
          judged = self.discriminator(self.pick_d(fake, x))
          d_loss = tf.reduce_mean(judged) - tf.reduce_mean(real)
        d_grads = d_tape.gradient(d_loss, self.discriminator.trainable_variables)
        self.d_opt.apply_gradients(
            zip(d_grads, self.discriminator.trainable_variables))
        {g_step}
        return d_loss
    """
_G_STEP = """with tf.GradientTape() as g_tape:
          fake = self.generator(self.pick_g(x, d))
          g_loss = -tf.reduce_mean(self.discriminator(self.pick_d(fake, x)))
        g_grads = g_tape.gradient(g_loss, self.generator.trainable_variables)
        self.g_opt.apply_gradients(
            zip(g_grads, self.generator.trainable_variables))"""


@pytest.mark.parametrize("pick_d, real_input, g_step, found", [
    # Both halves trained, each through a weightless supplier: silent.
    ("Supplier(1)", "x", _G_STEP, []),
    # The real side runs an encoder no step trains, through the supplier.
    ("Supplier(1)", "self.encoder(x)", _G_STEP, [22]),
    # The supplier itself makes weights: no step trains them.
    ("tf.keras.layers.Dense(8)", "x", _G_STEP, [22]),
    # No generator step: the discriminator alone, on a frozen generator.
    ("Supplier(1)", "x", "pass", [22]),
    # A plain class holding the encoder runs it: no pass-through.
    ("Holder(self.encoder)", "x", _G_STEP, [22]),
], ids=["gan_halves", "untrained_encoder_below", "weighted_supplier",
        "generator_never_trained", "holder_runs_the_encoder"])
def test_gan_halves_through_a_weightless_supplier(pick_d, real_input,
                                                  g_step, found):
  files = {"supply.py": _SUPPLIER,
           "gan.py": _GAN_CLASS.format(pick_d=pick_d, real_input=real_input,
                                       g_step=g_step)}
  assert [line for idiom, path, line in scanned.in_project(files)
          if idiom == "var-list-filter"] == found


# A data helper returning a tuple, each element from its own arguments.
_DATA = """\
    import numpy as np

    def batch(x, y, size):
      idx = np.random.randint(0, x.shape[0], size)
      y = np.array(y)
      return x[idx], y[idx]
    """
# A helper whose first element runs a model given to it.
_DATA_RUN = """\
    import numpy as np

    def batch(net, x, y, size):
      idx = np.random.randint(0, x.shape[0], size)
      return net(x[idx]), y[idx]
    """

_GANITE = """\
    import tensorflow as tf
    from data import batch

    def train(xs, ts, steps):
      class Gen(tf.keras.Model):
        def __init__(self):
          super().__init__()
          self.hidden = tf.keras.layers.Dense(8)
          self.out = tf.keras.layers.Dense(2)

        def decode(self, {decoded}):
          x = self.hidden({decoded})
          x = self.out(x)
          return x

        def call(self, inputs):
          return self.decode(inputs)

      class Disc(tf.keras.Model):
        def __init__(self):
          super().__init__()
          self.out = tf.keras.layers.Dense(1)

        def call(self, y):
          return self.out(y)

      gen, disc, infer = Gen(), Disc(), Disc()
      opt_g = tf.keras.optimizers.Adam()
      opt_d = tf.keras.optimizers.Adam()
      opt_i = tf.keras.optimizers.Adam()
      for _ in range(steps):
        with tf.GradientTape() as tape:
          x, t = batch(xs, ts, 8)
          y_fake = gen(x)
          d_loss = tf.reduce_mean(disc(y_fake))
        d_grads = tape.gradient(d_loss, disc.trainable_variables)
        opt_d.apply_gradients(zip(d_grads, disc.trainable_variables))
        with tf.GradientTape() as tape:
          x, t = batch(xs, ts, 8)
          g_loss = -tf.reduce_mean(disc(gen(x)))
        g_grads = tape.gradient(g_loss, gen.trainable_variables)
        opt_g.apply_gradients(zip(g_grads, gen.trainable_variables))
      made = gen(xs)
      for _ in range(steps):
        with tf.GradientTape() as tape:
          {unpack}
          i_loss = tf.reduce_mean(tf.square(infer(x) - y_hat))
        i_grads = tape.gradient(i_loss, infer.trainable_variables)
        opt_i.apply_gradients(zip(i_grads, infer.trainable_variables))
      return infer(xs)
    """


@pytest.mark.parametrize("data, decoded, unpack, found", [
    # The generator's outputs are the targets, batched by a helper whose
    # tuple gives each name from its own arguments: distilled, no stage.
    (_DATA, "z", "x, y_hat = batch(xs, made, 8)", []),
    # A method's local `x`, of a class built in the function, read from
    # a name the function binds to the generator's output, is not the
    # function's `x`.
    (_DATA, "y_fake", "x = xs[:8]\n          y_hat = made[:8]", []),
    (_DATA, "y_fake", "x, y_hat = batch(xs, made, 8)", []),
    # The generator's outputs are the inference network's input.
    (_DATA, "z", "y_hat, x = batch(xs, made, 8)", [48]),
    (_DATA, "y_fake", "x = made[:8]\n          y_hat = xs[:8]", [49]),
    # The helper runs the generator on the batch it feeds.
    (_DATA_RUN, "z", "x, y_hat = batch(gen, xs, made, 8)", [48]),
], ids=["targets_by_helper", "method_locals_apart", "both",
        "inputs_by_helper", "inputs_from_trained_gan",
        "helper_runs_the_gan"])
def test_a_network_distilled_from_a_trained_gan(data, decoded, unpack,
                                                found):
  files = {"data.py": data,
           "ganite.py": _GANITE.format(decoded=decoded, unpack=unpack)}
  assert [line for idiom, path, line in scanned.in_project(files)
          if idiom == "var-list-filter"] == found


def _functions(n):
  """`n` training functions, each with a model class of its own and a
  tuple unpacked from a data helper, as one file."""
  body = textwrap.dedent(_GANITE.format(
      decoded="y_fake", unpack="x, y_hat = batch(xs, made, 8)")).replace(
          "from data import batch\n", "")
  return textwrap.dedent(_DATA) + "".join(
      "\n\n" + body.replace("def train(", f"def train{i}(")
      for i in range(n))


def test_stages_read_each_helper_and_nested_class_once():
  """The helper's elements are read once per function, the nested
  classes' nodes once per home: work grows with the file, not faster."""
  small, large = ((scanned.scan_work(_functions(n), "_runs/_unpacked.py"),
                   scanned.scan_work(_functions(n), "_stage_marks.py"))
                  for n in (4, 16))
  assert small[0] > 20 and large[0] <= 5 * small[0], (small, large)
  assert small[1] > 20 and large[1] <= 5 * small[1], (small, large)


def test_a_head_on_an_untrained_backbone_in_eager_code_is_found():
  """The positive twin kept: a TF2 step over one sub-model of a model
  whose other part no step trains."""
  files = {"tune.py": """\
    import tensorflow as tf

    class Net(tf.keras.Model):
      def __init__(self):
        super().__init__()
        self.backbone = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        self.head = tf.keras.layers.Dense(2)

      def call(self, x):
        return self.head(self.backbone(x))

    net = Net()
    opt = tf.keras.optimizers.Adam()

    def step(x, y):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(net(x) - y))
      grads = tape.gradient(loss, net.layers[-1].trainable_variables)
      opt.apply_gradients(zip(grads, net.layers[-1].trainable_variables))
    """}
  assert [idiom for idiom, _, _ in scanned.in_project(files)] == [
      "var-list-filter"]
