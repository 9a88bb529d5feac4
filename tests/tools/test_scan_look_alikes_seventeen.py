"""`tfpartial scan` stays silent on code that trains every variable, or
writes no trained variable back, in the shapes part fourteen's negatives
and instance trees showed, beside the look-alikes that still freeze: a
helper's scope parameter that every call leaves at `None` (a collection
read without a scope lists every variable) and one some call sets; a
filter naming the whole model in a module that restores
`Saver(tf.global_variables())` (a run resumed whole, no part kept
pretrained) and one restoring a scope. Synthetic sources in the shape of real code."""

import textwrap

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _found(text):
  sources = [_files.Source("t.py", textwrap.dedent(text))]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, f.line) for f in findings]


_SCOPE_LEFT_AT_NONE = """\
    class Net(object):
      def __init__(self, x, y):
        w = tf.get_variable('w', [8, 2])
        self.loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        self.updates = self.apply_grads(self.loss{scope})

      def apply_grads(self, loss, scope=None):
        optimizer = tf.train.AdadeltaOptimizer(1.0)
        vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
        grads_and_vars = optimizer.compute_gradients(loss, var_list=vars)
        return optimizer.apply_gradients(grads_and_vars)
    """


@pytest.mark.parametrize("source,expected", [
    # Every call leaves the scope out: every trainable variable trains.
    (_SCOPE_LEFT_AT_NONE.format(scope=""), []),
    (_SCOPE_LEFT_AT_NONE.format(scope=", None"), []),
    (_SCOPE_LEFT_AT_NONE.format(scope=", scope=None"), []),
    # A call names a scope: only the variables under it train.
    (_SCOPE_LEFT_AT_NONE.format(scope=", 'head'"), [("var-list-filter", 9)]),
    (_SCOPE_LEFT_AT_NONE.format(scope=", scope='head'"),
     [("var-list-filter", 9)]),
], ids=["left-out", "none", "none-by-keyword", "scoped", "scoped-by-keyword"])
def test_scope_left_at_none(source, expected):
  assert _found(source) == expected



_RESUMED_WHOLE = """\
    def get_trainable_variables(tag=""):
        return [v for v in tf.trainable_variables() if tag in v.name]

    def separator(mix):
        with tf.variable_scope("separator"):
            return tf.layers.dense(mix, 2)

    def train(batch, load_model):
        out = separator(batch["mix"])
        loss = tf.reduce_mean(tf.square(out - batch["y"]))
        chosen = get_trainable_variables("separator")
        step = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=chosen)
        sess = tf.Session()
        restorer = tf.train.Saver({saved})
        restorer.restore(sess, load_model)
        return step
    """


@pytest.mark.parametrize("source,expected", [
    # A run resumed whole: the filter names the whole model it trains.
    (_RESUMED_WHOLE.format(saved="tf.global_variables()"), []),
    (_RESUMED_WHOLE.format(saved="var_list=tf.trainable_variables()"), []),
    # A part restored by its scope: what the filter leaves out stays.
    (_RESUMED_WHOLE.format(
        saved="tf.trainable_variables(scope='embedding')"),
     [("var-list-filter", 2)]),
    (_RESUMED_WHOLE.format(saved="var_list=tf.get_collection("
                           "tf.GraphKeys.GLOBAL_VARIABLES, 'embedding')"),
     [("var-list-filter", 2)]),
], ids=["global", "trainable", "scoped", "collection"])
def test_saver_over_every_variable_restores_no_part(source, expected):
  assert _found(source) == expected
