"""Final read of round forty: a rest list taken from a source that is not
provably one part (`model.trainable_variables`, `self.tvars`, a name
assigned `tf.trainable_variables()` twice) beside its filter, both run in
one `sess.run`, trains every variable at every step: silent, as at the
round's start (d773085). A rest taken from a scoped collection stays a
finding (test_scan_mend40_fp)."""

import pytest

import scanned

_SOURCES = {
    "a_rest_of_a_model_s_trainable_variables": """\
import tensorflow as tf
def build(model, loss, sess):
    grid = [v for v in model.trainable_variables if 'grid' in v.name]
    rest = [v for v in model.trainable_variables if v not in grid]
    op_grid = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=grid)
    op_rest = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=rest)
    for i in range(10):
        sess.run([op_grid, op_rest])
""",
    "a_rest_of_an_attribute_holding_every_variable": """\
import tensorflow as tf
class M:
    def build(self, loss, sess):
        self.tvars = tf.trainable_variables()
        grid = [v for v in self.tvars if 'grid' in v.name]
        rest = [v for v in self.tvars if v not in grid]
        op_grid = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=grid)
        op_rest = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=rest)
        for i in range(10):
            sess.run([op_grid, op_rest])
""",
    "a_rest_of_a_name_assigned_every_variable_twice": """\
import tensorflow as tf
def build(loss, sess, reset):
    tvars = tf.trainable_variables()
    if reset:
        tvars = tf.trainable_variables()
    grid = [v for v in tvars if 'grid' in v.name]
    rest = [v for v in tvars if v not in grid]
    op_grid = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=grid)
    op_rest = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=rest)
    for i in range(10):
        sess.run([op_grid, op_rest])
""",
}


@pytest.mark.parametrize("name", sorted(_SOURCES))
def test_a_rest_of_what_may_be_every_variable_run_with_its_filter_is_silent(
    name):
  assert scanned.found(_SOURCES[name]) == []
