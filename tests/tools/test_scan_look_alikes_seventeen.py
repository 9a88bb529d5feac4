"""`tfpartial scan` stays silent on code that trains every variable, or
writes no trained variable back, in the shapes part fourteen's negatives
and instance trees showed, beside the look-alikes that still freeze: a
helper's scope parameter that every call leaves at `None` (a collection
read without a scope lists every variable) and one some call sets.
Synthetic sources in the shape of real code."""

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


