"""`tfpartial scan`'s `var-list-filter` on lists built by hand that leave
out variables the loss reaches: one list per arm of a flag's `if ...
else` (greedy layer-wise training on a restored trunk), and items picked
by a fixed index from a container whose other items the model uses. The
look-alikes stay silent: each arm builds and trains a model of its own,
every item of a container is picked, or another step trains the rest.
Synthetic sources in the shape of real code (part twelve)."""

import pytest

import scanned


def _found(text):
  return [(idiom, line) for idiom, _, line in scanned.in_project(text)]


POSITIVE = {
    # A flag chooses which layers of the new branch train on a restored
    # trunk: the arms' lists never train together, so they are not two
    # halves (one finding per function and loss, at the first).
    "one hand-made list per arm of a flag": ("""\
        def train():
          feature_map = trunk(images)
          kernel1 = tf.Variable(tf.zeros([3, 3, 8, 8]))
          conv = tf.nn.conv2d(feature_map, kernel1, [1, 1, 1, 1], 'SAME')
          if FLAGS.two_layers:
            kernel2 = tf.Variable(tf.zeros([3, 3, 8, 8]))
            conv = tf.nn.conv2d(conv, kernel2, [1, 1, 1, 1], 'SAME')
          W = tf.get_variable('W', [8, 2])
          loss = tf.reduce_mean(tf.matmul(tf.reduce_mean(conv, [1, 2]), W))
          if FLAGS.two_layers:
            step = tf.train.GradientDescentOptimizer(0.1).minimize(
                loss, var_list=[W, kernel2])
          else:
            step = tf.train.GradientDescentOptimizer(0.1).minimize(
                loss, var_list=[W, kernel1])
        """, [("var-list-filter", 12)]),
    # Two of five per-language embeddings picked by index, positionally
    # (`minimize`'s third argument is `var_list`); the model reads any
    # of them by a language's index, and the loss reaches the others.
    "items picked by a fixed index from a container the model indexes": ("""\
        class Embed:
          def __init__(self, n, name):
            self.logit = tf.get_variable(name, [n, 8])

        class Model:
          def __init__(self):
            self.embeds = tuple(Embed(100, 'e%d' % i) for i in range(5))

          def data(self, sid, tid, src):
            return tf.gather(self.embeds[sid].logit, src)

        model = Model()
        loss = tf.reduce_mean(model.data(1, 3, src)) + shared(model, src)
        down = tf.train.AdamOptimizer(1e-3).minimize(
            loss, step, (model.embeds[1].logit, model.embeds[3].logit))
        """, [("var-list-filter", 15)]),
    # A second stage built on the output of a pretrained generator it
    # does not train (unless a flag joins it in the other arm); the
    # discriminator, on the refiner's output, is the GAN's other half.
    "a stage built on the output of a part no step trains": ("""\
        class RefineGAN(Model):
          def build(self):
            self.G = Refiner(self.pretrained.G.tensor_out, name='R')
            self.D = Discriminator(self.G.tensor_out, name='D')
            self.g_loss, self.d_loss = self.losses()
            if self.config['joint_training']:
              self.g_step = self.opt.minimize(
                  self.g_loss, self.step, self.G.vars + self.pretrained.G.vars)
            else:
              self.g_step = self.opt.minimize(self.g_loss, self.step, self.G.vars)
            self.d_step = self.opt.minimize(self.d_loss, self.step, self.D.vars)
        """, [("var-list-filter", 10)]),
}

NEGATIVE = {
    # Each arm builds a model and trains all of it.
    "each arm builds and trains its own model": """\
        def train(x, y):
          if FLAGS.big:
            w = tf.Variable(tf.zeros([4, 4]))
            b = tf.Variable(tf.zeros([4]))
            loss = tf.reduce_mean(tf.matmul(x, w) + b - y)
            step = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=[w, b])
          else:
            v = tf.Variable(tf.zeros([4, 4]))
            loss = tf.reduce_mean(tf.matmul(x, v) - y)
            step = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=[v])
          return step
        """,
    # Every item picked, from its first on: nothing is left out.
    "every item of a container picked": """\
        class Model:
          def __init__(self):
            self.embeds = tuple(Embed(100, 'e%d' % i) for i in range(2))

          def data(self, sid, src):
            return tf.gather(self.embeds[sid].logit, src)

        model = Model()
        loss = tf.reduce_mean(model.data(1, src))
        down = tf.train.AdamOptimizer(1e-3).minimize(
            loss, step, (model.embeds[0].logit, model.embeds[1].logit))
        """,
    # A GAN: the discriminator runs on the generator's output, and the
    # generator, built on a data object's tensor, has its own step.
    "a GAN's discriminator on its generator's output": """\
        class GAN(Model):
          def build(self):
            self.G = Generator(self.data.z, name='G')
            self.D = Discriminator(self.G.tensor_out, name='D')
            self.g_loss, self.d_loss = self.losses()
            self.g_step = self.opt.minimize(self.g_loss, self.step, self.G.vars)
            self.d_step = self.opt.minimize(self.d_loss, self.step, self.D.vars)
        """,
    # A GAN's halves picked from one list: the other step trains the rest.
    "items of one list picked by two losses' steps": """\
        def build(params, g_loss, d_loss):
          h = [params[i] for i in range(len(params))]
          g_op = tf.train.AdamOptimizer(1e-4).minimize(
              g_loss, var_list=[params[1], params[3]])
          d_op = tf.train.AdamOptimizer(1e-4).minimize(
              d_loss, var_list=[params[0], params[2]])
          return g_op, d_op
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_hand_made_list_leaving_out_what_the_loss_reaches(name):
  text, expected = POSITIVE[name]
  assert _found(text) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_whole_or_trained_complement_stays_silent(name):
  assert _found(NEGATIVE[name]) == []
