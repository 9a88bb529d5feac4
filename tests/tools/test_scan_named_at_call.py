"""`tfpartial scan`'s `var-list-filter` where a generic name filter of
the step's own module (`get_variables_with_name(name)`: `[v for v in
tf.trainable_variables() if name in v.name]`) is handed the literal
name at the call (part thirty-one's table adapter: only
`'adapter_layers'` trains over a restored BERT): the finding is at that
call, where the name is chosen, one per call, not once at the helper
for every step. Silent twins: a GAN's halves each chosen by the helper,
a target network synced from the helper's list, and a helper that reads
its names from a flag itself keeps the finding inside."""

from tests.tools import scanned

_ADAPTER = """
import tensorflow as tf
import optimization


def get_variables_with_name(name, train_only=True):
    if train_only:
        t_vars = tf.trainable_variables()
    else:
        t_vars = tf.global_variables()
    d_vars = [var for var in t_vars if name in var.name]
    return d_vars


class KoNET(object):
    def training_lm(self, loss):
        tvars = get_variables_with_name('adapter_layers')
        return optimization.create_optimizer(loss=loss, init_lr=5e-6,
                                             tvars=tvars)

    def training_cs(self, loss):
        tvars = get_variables_with_name('adapter_layers')
        pvars = get_variables_with_name('prediction_layers')
        pvars.extend(tvars)
        return optimization.create_optimizer(loss=loss, init_lr=5e-6,
                                             tvars=pvars)
"""

_OPTIMIZATION = """
import tensorflow as tf


def create_optimizer(loss, init_lr, tvars):
    optimizer = tf.train.AdamOptimizer(init_lr)
    grads = tf.gradients(loss, tvars)
    return optimizer.apply_gradients(zip(grads, tvars))
"""


def _found(files):
  return [f for f in scanned.in_project(files) if f[0] == "var-list-filter"]


def test_each_call_handing_a_name_is_the_finding():
  assert _found({"model.py": _ADAPTER,
                 "optimization.py": _OPTIMIZATION}) == [
      ("var-list-filter", "model.py", 17),
      ("var-list-filter", "model.py", 22)]


def test_a_gan_s_halves_chosen_by_the_helper_are_silent():
  code = """
import tensorflow as tf


def get_variables_with_name(name):
    return [var for var in tf.trainable_variables() if name in var.name]


def build(g_loss, d_loss):
    g_vars = get_variables_with_name('generator')
    d_vars = get_variables_with_name('discriminator')
    g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
    d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
    return g_op, d_op
"""
  assert _found({"t.py": code}) == []


def test_a_target_network_synced_from_the_helper_s_list_is_silent():
  code = """
import tensorflow as tf


def get_variables_with_name(name):
    return [var for var in tf.trainable_variables() if name in var.name]


def build(loss):
    online = get_variables_with_name('online')
    target = get_variables_with_name('target')
    sync = [t.assign(0.99 * t + 0.01 * o) for t, o in zip(target, online)]
    step = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=online)
    return step, sync
"""
  assert _found({"t.py": code}) == []


def test_a_helper_reading_its_names_from_a_flag_keeps_the_finding():
  code = """
import tensorflow as tf

FLAGS = tf.app.flags.FLAGS


def get_variables_to_train():
    scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
    chosen = []
    for scope in scopes:
        chosen.extend(tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, scope))
    return chosen


def build(loss):
    variables_to_train = get_variables_to_train()
    return tf.train.AdamOptimizer(1e-4).minimize(
        loss, var_list=variables_to_train)
"""
  assert _found({"t.py": code}) == [("var-list-filter", "t.py", 11)]
