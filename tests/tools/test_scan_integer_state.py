"""`tfpartial scan`: a write into a variable made with an integer or
boolean dtype (deepspeech-reconstruction's per-utterance counters:
`self.iters[i] = tf.Variable(tf.zeros([n], dtype=tf.int32), dtype=tf.int32)`,
then `tf.assign(self.iters[i], self.iters[i] * tf.cast(kept, tf.int32))`)
writes a counter no optimizer trains (no gradient reaches an integer):
it freezes nothing, silent. The same write into a float variable of the
same class stays found."""

import pytest

import scanned

_COUNTERS = """\
import tensorflow as tf

class Reconstruction:
  def __init__(self, n, dim):
    self.iters = [None for _ in range(n)]
    self.x = tf.Variable(tf.zeros([dim]))
    for i in range(n):
      self.iters[i] = tf.Variable(tf.zeros([dim], {inner}), {outer})

  def update(self, i, steps, idx):
    fresh = tf.reduce_sum(tf.one_hot(idx, depth=8, {inner}), 0)
    kept = tf.logical_or(tf.greater(fresh, 0), tf.equal(steps, 0))
    new = self.{target} * {cast}
    return [tf.assign(self.{target}, new)]

  def train(self, loss):
    return tf.train.AdamOptimizer().minimize(loss)
"""

SILENT = {
    "a counter of dtype int32": _COUNTERS.format(
        inner="dtype=tf.int32", outer="dtype=tf.int32", target="iters[i]",
        cast="tf.cast(kept, tf.int32) + fresh"),
    "a counter whose initial value is int64": _COUNTERS.format(
        inner="dtype=tf.int64", outer="name='count'", target="iters[i]",
        cast="tf.cast(kept, tf.int64) + fresh"),
    "a boolean state": _COUNTERS.format(
        inner="dtype=tf.bool", outer="dtype='bool'", target="iters[i]",
        cast="tf.cast(kept, tf.bool)"),
}

FOUND = {
    "the float variable beside the counters": (_COUNTERS.format(
        inner="dtype=tf.int32", outer="dtype=tf.int32", target="x",
        cast="tf.cast(kept, tf.float32) + fresh"), 14),
    "a counter made as float": (_COUNTERS.format(
        inner="dtype=tf.float32", outer="dtype=tf.float32", target="iters[i]",
        cast="tf.cast(kept, tf.float32) + fresh"), 14),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_write_into_an_integer_variable_is_silent(name):
  assert scanned.found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_write_into_a_float_variable_is_found(name):
  code, line = FOUND[name]
  assert scanned.found(code) == [("weight-remask", line)]
