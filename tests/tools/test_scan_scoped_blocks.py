"""`tfpartial scan`'s `var-list-filter` where a model is built inline
under `with tf.variable_scope(...)` blocks (issue 30, part thirty-five's
semi-supervised VAE notebook): a VAE encoder in `unsupervised`, trained
in one loop, then a classifier head in `supervised` on its latent code,
trained alone in a later loop by `var_list=supervised_vars`. The head's
input is made under the encoder's block, so the encoder is an earlier
stage that the head's run leaves out. A GAN's or an actor-critic's
halves alternate in one loop; a teacher's output only feeds the loss; a
second model built on nothing of the first trains nothing left out."""

import scanned

# Two blocks and two steps; `FIRST` and `SECOND` are what each loop runs.
_SEMI = """
import tensorflow as tf
from tensorflow.compat.v1.layers import dense

x = tf.compat.v1.placeholder(tf.float32, [None, 30])
y = tf.compat.v1.placeholder(tf.int32, [None])
eps = tf.compat.v1.placeholder(tf.float32, [None, 10])
with tf.compat.v1.variable_scope("unsupervised"):
    mu = dense(inputs=x, activation='relu', units=10)
    sigma = dense(inputs=x, activation='relu', units=10)
    z = mu + sigma * eps
    x_hat = dense(dense(inputs=z, units=10), units=30)
with tf.compat.v1.variable_scope("supervised"):
    logits = dense(inputs=HEAD_INPUT, units=2)
unsupervised_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "unsupervised")
vae_cost = tf.reduce_sum(tf.square(x - x_hat))
vae_optimizer = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(vae_cost, var_list=unsupervised_vars)
supervised_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "supervised")
super_cost = SUPER_COST
super_optimizer = tf.compat.v1.train.AdamOptimizer(8e-3).minimize(super_cost, var_list=supervised_vars)

with tf.compat.v1.Session() as sess:
    for step in range(10001):
        sess.run([FIRST])
    for step in range(2501):
        sess.run([SECOND])
"""

_CE = ("tf.compat.v1.losses.sparse_softmax_cross_entropy("
       "logits=logits, labels=y)")


def _semi(head="z", cost=_CE, first="vae_optimizer",
          second="super_optimizer"):
  return _SEMI.replace("HEAD_INPUT", head).replace(
      "SUPER_COST", cost).replace("FIRST", first).replace("SECOND", second)


def _line(code, start):
  return next(number for number, line in enumerate(code.splitlines(), 1)
              if line.lstrip().startswith(start))


def _found(code):
  return [(idiom, line) for idiom, _, line in scanned.in_project(code)
          if idiom == "var-list-filter"]


def test_a_head_trained_after_the_encoder_its_input_comes_from_is_found():
  code = _semi()
  assert _found(code) == [("var-list-filter",
                           _line(code, "supervised_vars = "))]


def test_the_encoder_built_by_a_function_opening_its_scope_is_the_same():
  code = _semi().replace(
      'with tf.compat.v1.variable_scope("unsupervised"):\n',
      'def encoder(x):\n  with tf.compat.v1.variable_scope("unsupervised"):\n'
  ).replace("    x_hat = dense(dense(inputs=z, units=10), units=30)\n",
            "    x_hat = dense(dense(inputs=z, units=10), units=30)\n"
            "  return z, x_hat\nz, x_hat = encoder(x)\n")
  assert _found(code) == [("var-list-filter",
                           _line(code, "supervised_vars = "))]


def test_both_halves_trained_in_one_loop_leave_nothing_out():
  code = _semi(first="vae_optimizer, super_optimizer",
               second="vae_optimizer, super_optimizer")
  assert _found(code) == []


def test_a_head_on_the_raw_input_leaves_nothing_out():
  # A second model beside the VAE: its input is no stage's output.
  code = _semi(head="x")
  assert _found(code) == []


def test_a_student_measured_by_a_trained_teacher_is_no_stage():
  # Distillation: the `unsupervised` model is a teacher whose output
  # only the student's loss reads.
  code = _semi(head="x", cost="tf.reduce_mean(tf.square(logits[:, :1] - x_hat[:, :1]))")
  assert _found(code) == []


# A GAN built inline: the generator's block, then the discriminator's on
# real and fake; `LOOP` runs the two ops.
_GAN = """
import tensorflow as tf
from tensorflow.compat.v1.layers import dense

noise = tf.compat.v1.placeholder(tf.float32, [None, 10])
real = tf.compat.v1.placeholder(tf.float32, [None, 30])
with tf.compat.v1.variable_scope("generator"):
    fake = dense(dense(noise, 30, activation='relu', name='g1'), 30, name='g2')
with tf.compat.v1.variable_scope("discriminator"):
    d_real = dense(real, 1, name='d1')
with tf.compat.v1.variable_scope("discriminator", reuse=True):
    d_fake = dense(fake, 1, name='d1')
g_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "generator")
d_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "discriminator")
d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
g_loss = -tf.reduce_mean(d_fake)
d_op = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
g_op = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)

with tf.compat.v1.Session() as sess:
LOOP
"""


def test_a_gans_halves_alternating_in_one_loop_are_silent():
  code = _GAN.replace("LOOP", (
      "    for step in range(1000):\n"
      "        for _ in range(5):\n"
      "            sess.run(d_op)\n"
      "        sess.run(g_op)"))
  assert _found(code) == []


def test_a_gan_whose_discriminator_warms_up_first_trains_both_after():
  code = _GAN.replace("LOOP", (
      "    for step in range(100):\n"
      "        sess.run(d_op)\n"
      "    for step in range(1000):\n"
      "        sess.run([d_op, g_op])"))
  assert _found(code) == []


def test_an_actor_and_critic_built_inline_in_one_loop_are_silent():
  code = """
import tensorflow as tf
from tensorflow.compat.v1.layers import dense

s = tf.compat.v1.placeholder(tf.float32, [None, 8])
target_q = tf.compat.v1.placeholder(tf.float32, [None, 1])
with tf.compat.v1.variable_scope("actor"):
    action = dense(s, 2, activation=tf.tanh, name='a1')
with tf.compat.v1.variable_scope("critic"):
    q = dense(tf.concat([s, action], 1), 1, name='c1')
a_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "actor")
c_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "critic")
actor_op = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(-tf.reduce_mean(q), var_list=a_vars)
critic_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(tf.reduce_mean(tf.square(q - target_q)), var_list=c_vars)

with tf.compat.v1.Session() as sess:
    for episode in range(100):
        sess.run(critic_op)
        sess.run(actor_op)
"""
  assert _found(code) == []
