"""`tfpartial scan`'s `var-list-filter` on the steps of one run built by a
project helper from lists another helper filters (part twenty-three's
TensorGate: `updater.default(cfg, loss, gs, select_vars('encoder'))` and
the same for `'generator'`, grouped): a step whose filter names a whole
model by the scope the project opens around it is one of the parts the
run trains, so an encoder's list beside it is not a part left out. Twin:
the same encoder step alone in its function, found."""

from tests.tools import scanned

_HELPERS = {
    "gate/variable.py": """
import tensorflow as tf


def select_vars(include_name, var_list=None):
    if var_list is None:
        var_list = tf.trainable_variables()
    return [var for var in var_list if include_name in var.name]
""",
    "gate/updater.py": """
import tensorflow as tf


def default(loss, global_step, var_list=None, lr=1e-3):
    if var_list is None:
        var_list = tf.trainable_variables()
    optimizer = tf.train.AdamOptimizer(lr)
    return optimizer.minimize(loss, global_step=global_step, var_list=var_list)
""",
    "nets.py": """
import tensorflow as tf


def encoder(x):
    with tf.variable_scope('vae/encoder'):
        return tf.layers.dense(x, 4)


def generator(z):
    with tf.variable_scope('generator'):
        return tf.layers.dense(z, 8)
""",
}

_VAE = """
import tensorflow as tf
from gate import updater
from gate import variable
import nets


def train(x):
    loss = tf.reduce_mean(tf.square(nets.generator(nets.encoder(x)) - x))
    global_step = tf.train.create_global_step()
    var_e = variable.select_vars('encoder')
    var_g = variable.select_vars('generator')
    op1 = updater.default(loss, global_step, var_e)
    op2 = updater.default(loss, None, var_g, 1e-4)
    train_op = tf.group(op1, op2)
    with tf.Session() as sess:
        sess.run(train_op)
"""


def _found(train):
  return [(idiom, path, line) for idiom, path, line in scanned.in_project(
      {**_HELPERS, "train.py": train})]


def test_two_helper_steps_grouped_over_the_whole_model_are_silent():
  assert _found(_VAE) == []


def test_the_encoder_step_alone_is_found():
  code = _VAE.replace(
      "    op2 = updater.default(loss, None, var_g, 1e-4)\n", "").replace(
          "tf.group(op1, op2)", "tf.group(op1)")
  assert _found(code) == [("var-list-filter", "gate/variable.py", 8)]


def test_the_model_step_run_apart_from_the_encoders_is_found():
  # Two phases, each its own loop: the encoder's phase leaves the
  # generator out.
  code = _VAE.replace("    train_op = tf.group(op1, op2)\n", "").replace(
      "        sess.run(train_op)\n",
      "        for _ in range(10):\n"
      "            sess.run(op2)\n"
      "        for _ in range(10):\n"
      "            sess.run(op1)\n")
  assert _found(code) == [("var-list-filter", "gate/variable.py", 8)]
