"""`tfpartial scan`'s `var-list-filter` on greedy layer-wise training
whose filters name a piece of the variables' names that only the layer
helper writes (`'en2_' in var.name`, the helper making
`tf.get_variable(name='{}_W'.format(variable_name))` from the `'en2'` its
caller passes): the second stage's loop trains layer two on layer one's
output, layer one held (part thirty-four's stacked autoencoders). Silent
twins: the same helper and filters where the steps alternate in one loop
(a GAN's halves, an actor and a critic), where the later stage's loss
does not run the earlier layer (a second model trained alone), or where
the earlier network only measures the later one (a teacher)."""

import pytest

import scanned

_HELPER = """
import tensorflow as tf


class Stacked(object):
    def encoder(self, x, d, variable_name, name):
        with tf.variable_scope(name):
            n = x.get_shape().as_list()[-1]
            W = tf.get_variable(name='{}_W'.format(variable_name), shape=[n, d])
            b = tf.get_variable(name='{}_b'.format(variable_name), shape=[d])
            b_t = tf.get_variable(name='{}_b_t'.format(variable_name), shape=[n])
            h = tf.sigmoid(tf.matmul(x, W) + b)
            o = tf.matmul(h, tf.transpose(W)) + b_t
        return h, o

    def loss(self, x, y, name):
        with tf.variable_scope(name):
            return tf.reduce_mean(tf.square(x - y))
"""

_BUILD = """
    def build(self):
        en1, en1_o = self.encoder(self.X, 256, 'en1', 'encoder1')
        en2, en2_o = self.encoder(en1, 128, 'en2', 'encoder2')
        self.out = tf.layers.dense(en2, 784)
        self.en1_loss = self.loss(self.X, en1_o, 'en1_loss')
        self.en2_loss = self.loss(en1, en2_o, 'en2_loss')
        self.total_loss = self.loss(self.X, self.out, 'total_loss')
        t_vars = tf.trainable_variables()
        en1_vars = [var for var in t_vars if 'en1_' in var.name]
        en2_vars = [var for var in t_vars if 'en2_' in var.name]
        self.en1_optim = tf.train.AdamOptimizer(0.01).minimize(self.en1_loss, var_list=en1_vars)
        self.en2_optim = tf.train.AdamOptimizer(0.01).minimize(self.en2_loss, var_list=en2_vars)
        self.total_optim = tf.train.AdamOptimizer(0.01).minimize(self.total_loss, var_list=t_vars)
"""

_STAGES = """
    def fit(self, data):
        for epoch in range(5):
            for batch in data:
                self.sess.run([self.en1_loss, self.en1_optim], {self.X: batch})
        for epoch in range(5):
            for batch in data:
                self.sess.run([self.en2_loss, self.en2_optim], {self.X: batch})
        for epoch in range(5):
            for batch in data:
                self.sess.run([self.total_loss, self.total_optim], {self.X: batch})
"""

_ALTERNATING = """
    def fit(self, data):
        for epoch in range(5):
            for batch in data:
                self.sess.run(self.en1_optim, {self.X: batch})
                self.sess.run(self.en2_optim, {self.X: batch})
"""

# Line of `en2_vars = ...` in the stacked program.
_EN2 = _HELPER.count("\n") + 11


def _found(code):
  return [(idiom, line) for idiom, _, line in scanned.in_project(code)
          if idiom == "var-list-filter"]


NAMED = {
    "formatted": _HELPER,
    "concatenated": _HELPER.replace("'{}_W'.format(variable_name)",
                                    "variable_name + '_W'"),
    "an f-string": _HELPER.replace("'{}_W'.format(variable_name)",
                                   "f'{variable_name}_W'"),
    "a percent template": _HELPER.replace("'{}_W'.format(variable_name)",
                                          "'%s_W' % variable_name"),
}


@pytest.mark.parametrize("written", sorted(NAMED))
def test_a_later_layer_trained_on_a_held_one_is_found(written):
  assert _found(NAMED[written] + _BUILD + _STAGES) == [
      ("var-list-filter", _EN2)]


_FUNCTIONS = """
import tensorflow as tf


def encoder(x, d, variable_name):
    n = x.get_shape().as_list()[-1]
    W = tf.get_variable('%s_W' % variable_name, [n, d])
    h = tf.sigmoid(tf.matmul(x, W))
    return h, tf.matmul(h, tf.transpose(W))


class Stacked(object):
"""


def test_the_helper_written_as_a_module_function_is_found():
  code = _FUNCTIONS + (_BUILD + _STAGES).replace(
      "self.encoder(self.X, 256, 'en1', 'encoder1')",
      "encoder(self.X, 256, 'en1')").replace(
          "self.encoder(en1, 128, 'en2', 'encoder2')",
          "encoder(en1, 128, 'en2')").replace(
              "self.loss(", "tf.losses.mean_squared_error(").replace(
                  ", 'en1_loss')", ")").replace(", 'en2_loss')", ")").replace(
                      ", 'total_loss')", ")")
  assert _found(code) == [("var-list-filter", _FUNCTIONS.count("\n") + 11)]


def test_the_two_layers_alternating_in_one_loop_are_silent():
  assert _found(_HELPER + _BUILD + _ALTERNATING) == []


def test_a_second_layer_trained_on_the_input_alone_is_silent():
  # Not stacked: layer two reads the data, not layer one's output.
  code = (_HELPER + _BUILD.replace(
      "self.encoder(en1, 128, 'en2', 'encoder2')",
      "self.encoder(self.X, 128, 'en2', 'encoder2')").replace(
          "self.loss(en1, en2_o, 'en2_loss')",
          "self.loss(self.X, en2_o, 'en2_loss')") + _STAGES)
  assert _found(code) == []


def test_a_name_the_helper_writes_alone_is_silent():
  # Every call makes `W`: the filter's piece names no call's layer.
  code = (_HELPER.replace("'{}_W'.format(variable_name)", "'en1_W'")
          .replace("'{}_b'.format(variable_name)", "'b'")
          .replace("'{}_b_t'.format(variable_name)", "'b_t'")
          + _BUILD + _STAGES)
  assert _found(code) == []


_GAN = """
import tensorflow as tf


def linear(x, n, scope_name):
    w = tf.get_variable(scope_name + '_w', [x.get_shape()[-1], n])
    b = tf.get_variable(scope_name + '_b', [n])
    return tf.matmul(x, w) + b


def generator(z):
    return tf.tanh(linear(tf.nn.relu(linear(z, 128, 'g_h0')), 784, 'g_h1'))


def discriminator(x):
    return linear(tf.nn.relu(linear(x, 128, 'd_h0')), 1, 'd_h1')


def train(sess, data, z):
    fake = generator(z)
    d_real, d_fake = discriminator(data), discriminator(fake)
    d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
    g_loss = -tf.reduce_mean(d_fake)
    t_vars = tf.trainable_variables()
    d_vars = [v for v in t_vars if 'd_' in v.name]
    g_vars = [v for v in t_vars if 'g_' in v.name]
    d_optim = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
    g_optim = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
    for epoch in range(25):
        for i in range(100):
            sess.run(d_optim)
            sess.run(g_optim)
"""


def test_a_gan_s_halves_named_by_their_layers_are_silent():
  assert _found(_GAN) == []


def test_a_gan_whose_halves_run_in_loops_of_one_epoch_is_silent():
  code = _GAN.replace(
      "        for i in range(100):\n"
      "            sess.run(d_optim)\n"
      "            sess.run(g_optim)\n",
      "        for i in range(100):\n"
      "            sess.run(d_optim)\n"
      "        for i in range(100):\n"
      "            sess.run(g_optim)\n")
  assert _found(code) == []


def test_an_actor_and_a_critic_named_by_their_layers_are_silent():
  code = _GAN.replace("def generator(z):", "def actor(z):").replace(
      "fake = generator(z)", "fake = actor(z)").replace(
          "d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)",
          "d_loss = tf.reduce_mean(tf.square(d_real - 1.0))")
  assert _found(code) == []


def test_a_teacher_trained_first_then_measuring_a_student_is_silent():
  # The teacher's output is the student's target, not its input.
  code = _GAN.replace(
      "    fake = generator(z)\n"
      "    d_real, d_fake = discriminator(data), discriminator(fake)\n"
      "    d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)\n"
      "    g_loss = -tf.reduce_mean(d_fake)\n",
      "    teacher = discriminator(data)\n"
      "    d_loss = tf.reduce_mean(tf.square(teacher - z))\n"
      "    student = linear(data, 1, 'g_h9')\n"
      "    g_loss = tf.reduce_mean(tf.square(student - tf.stop_gradient(teacher)))\n"
  ).replace(
      "        for i in range(100):\n"
      "            sess.run(d_optim)\n"
      "            sess.run(g_optim)\n",
      "        sess.run(d_optim)\n"
      "    for epoch in range(25):\n"
      "        sess.run(g_optim)\n")
  assert _found(code) == []
