"""`tfpartial scan` on four readings that took a filtered list for the
whole network, each found again where what it reads does not hold:

- A list grown level by level (`for k in range(X): var_list += [...
  'block_%d' % k ...]`) is a stage's whole network only when the loop's
  last level is the one a filter of the same function trains alone as
  it fades in (`'level_%d' % (i + 1)` beside `range(i + 1)` over
  `'level_%d' % (k + 1)`); "the first n blocks" stays a filter, and a
  list one level short of the newest is read as two lists in turn.
- Two lists kept by covering tests of names and applied in turn by a
  parity leave nothing out only where the parity's two arms are what
  reaches the step: a filter after the `if` narrows it again.
- An assert that a filtered list is as long as the list it filters
  (`len(m.trainable_weights) - len(kept) == 0`) says nothing is left
  out; the length of another list (one layer's weights), or of the
  kept list itself, says nothing of the sort.
- A step bound in a script's `if __name__ == '__main__':` block that no
  run fetches never runs; under `if __name__ != '__main__':` (run when
  imported) it is an importer's to fetch, and stays found.
"""

import pytest

from tests.tools import scanned

_FIRST_BLOCKS = """\
import tensorflow as tf

def finetune(loss, n_trainable):
  opt = tf.compat.v1.train.AdamOptimizer(1e-4)
  var_list = []
  {grow}
  return opt.minimize(loss, var_list=var_list)
"""

_GROWN = ("for k in range({bound}):\n"
          "    var_list += [v for v in tf.compat.v1.trainable_variables()"
          " if 'block_%d' % k in v.name]")

_STAGE = """\
import tensorflow as tf

def stage_step(loss, stage, fading):
  trained = []
  for k in range({bound}):
    trained.extend(tf.compat.v1.get_collection(
        tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, 'block_{{}}'.format(k)))
  newest = tf.compat.v1.get_collection(
      tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, 'block_{{}}'.format(stage))
  opt = tf.compat.v1.train.AdamOptimizer(1e-3)
  grads_all = opt.compute_gradients(loss, trained)
  grads_newest = opt.compute_gradients(loss, newest)
  return tf.cond(fading, lambda: opt.apply_gradients(grads_newest),
                 lambda: opt.apply_gradients(grads_all))
"""

_ROUTED = """\
import tensorflow as tf

def build(loss1, loss2, epoch):
  opt = tf.compat.v1.train.AdamOptimizer()
  a = opt.compute_gradients(loss1)
  b = opt.compute_gradients(loss2)
  a = [(g, v) for g, v in a if not v.name.startswith('Latentpos')]
  b = [(g, v) for g, v in b if v.name.startswith('Latent')]
  if epoch % 2 == 0:
    grads = a
  else:
    grads = b
{after}
  return opt.apply_gradients(grads)
"""

_ASSERTED = """\
import tensorflow as tf

m = tf.keras.Sequential([tf.keras.layers.Dense(4, name="head"),
                         tf.keras.layers.Dense(4, name="body_frozen")])
opt = tf.keras.optimizers.Adam()

@tf.function
def run_step(x, y, training=True):
  with tf.GradientTape() as tape:
    total_loss = tf.reduce_mean((m(x) - y) ** 2)
  if training:
    train_weights = [e for e in m.trainable_weights if 'frozen' not in e.name]
    assert {check}
    grads = tape.gradient(total_loss, train_weights)
    opt.apply_gradients(zip(grads, train_weights))
  return total_loss
"""

_BABBLER = """\
import tensorflow as tf


class babbler(object):
    def __init__(self, batch_size):
        self._x = tf.placeholder(tf.int32, [batch_size, None])
        with tf.variable_scope("rnn"):
            cell = tf.nn.rnn_cell.LSTMCell(64)
            outputs, state = tf.nn.dynamic_rnn(cell, tf.one_hot(self._x, 26),
                                               dtype=tf.float32)
        self._top_final_hidden = state.h

    def get_rep_ops(self):
        return self._top_final_hidden, self._x
"""

_SCRIPT = """\
import tensorflow as tf
from unirep import babbler

if {test}:
    b = babbler(batch_size=12)
    final_hidden, x_placeholder = b.get_rep_ops()
    y_placeholder = tf.placeholder(tf.float32, shape=[None, 1])
    with tf.variable_scope("top"):
        prediction = tf.contrib.layers.fully_connected(final_hidden, 1)
    loss = tf.losses.mean_squared_error(y_placeholder, prediction)
    top_variables = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                      scope="top")
    optimizer = tf.train.AdamOptimizer(1e-3)
    top_only_step_op = optimizer.minimize(loss, var_list=top_variables)
    all_step_op = optimizer.minimize(loss)
    with tf.Session() as sess:
        for i in range(10):
            sess.run([loss, all_step_op], feed_dict={{y_placeholder: [[42]]}})
"""


def _script(test):
  return [f for f in scanned.in_project({
      "unirep.py": _BABBLER, "train.py": _SCRIPT.format(test=test)})
          if f[0] == "var-list-filter"]


FOUND = {
    # The reviewer's p7: the first `n_trainable` of twelve blocks.
    "the first n blocks grown in a loop": (_FIRST_BLOCKS.format(
        grow=_GROWN.format(bound="n_trainable")), [("var-list-filter", 7)]),
    # Its twin from `n_trainable` on was found already.
    "the blocks from n on grown in a loop": (_FIRST_BLOCKS.format(
        grow=_GROWN.format(bound="n_trainable, 12")),
                                             [("var-list-filter", 7)]),
    # The reviewer's p4: the parity's lists narrowed after the `if`.
    "lists applied in turn, narrowed after the parity": (_ROUTED.format(
        after="  grads = [(g, v) for g, v in grads"
              " if v.name.startswith('decoder')]"),
                                                         [("var-list-filter",
                                                           13)]),
    # The reviewer's p3: one layer's weights are not the list filtered.
    "a filter asserted as long as one layer's weights": (_ASSERTED.format(
        check="len(train_weights) == len(m.layers[0].weights)"),
                                                         [("var-list-filter",
                                                           12)]),
    "a filter asserted as long as one layer's trainable weights": (
        _ASSERTED.format(check="len(m.layers[0].trainable_weights)"
                               " - len(train_weights) == 0"),
        [("var-list-filter", 12)]),
    "a filter asserted as long as itself": (_ASSERTED.format(
        check="len(train_weights) == len(train_weights)"),
                                            [("var-list-filter", 12)]),
}

SILENT = {
    # The curriculum's stage: every level up to the newest, the newest
    # trained alone as it fades in (found there, not at the grown list).
    "a list grown up to the newest level beside its fade-in": (
        _STAGE.format(bound="stage + 1"), [("var-list-filter", 8)]),
    "a list grown from 0 up to the newest level beside its fade-in": (
        _STAGE.format(bound="0, stage + 1"), [("var-list-filter", 8)]),
    # Every block before the stage's own, beside the newest trained
    # alone: not the stage's network but two lists that between them
    # keep every block, trained in turn, read as any such pair is (the
    # newest was found only while the loop was taken for the network).
    "a list grown one level short of the newest, beside it": (
        _STAGE.format(bound="stage"), []),
    "lists applied in turn by a parity": (_ROUTED.format(after=""), []),
    "a filter asserted as long as the list it filters": (_ASSERTED.format(
        check="len(train_weights) == len(m.trainable_weights)"), []),
    "a filter asserted as long as the list it filters, that one first": (
        _ASSERTED.format(check="len(m.trainable_weights) - len(train_weights)"
                               " == 0"), []),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found(name):
  code, expected = FOUND[name]
  assert scanned.found(code) == expected


@pytest.mark.parametrize("name", sorted(SILENT))
def test_the_whole_network_stays_whole(name):
  code, expected = SILENT[name]
  assert scanned.found(code) == expected


@pytest.mark.parametrize("test", ["__name__ == '__main__'",
                                  "'__main__' == __name__"])
def test_a_step_under_a_script_s_main_block_that_no_run_fetches_is_silent(
    test):
  assert _script(test) == []


def test_a_step_under_a_block_run_when_imported_is_found():
  assert _script("__name__ != '__main__'") == [
      ("var-list-filter", "train.py", 11)]


def test_a_step_under_a_test_of_another_module_name_is_found():
  assert _script("__name__ == 'unirep'") == [
      ("var-list-filter", "train.py", 11)]
