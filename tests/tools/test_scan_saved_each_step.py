"""`tfpartial scan`: a copy taken from the variable again with each step,
before it (`backup_op = tf.assign(backup, w)` the train op waits on, or a
train function's `saved.assign(w)` statement), and written back where a
mask says after the step, is values saved and written back: `write-back`
(AdaptiveVC/SRVC's coordinate-descent chunks, part 24e), not the kept
non-trainable copy of `shadow-variable`; and the twins that stay a shadow
variable: a copy taken once (an op run before training, or the copy's
initial value), a copy of another variable."""

import pytest

import scanned

_GRAPH = """\
    import tensorflow as tf

    w = tf.get_variable("w", [8, 4])
    loss = tf.reduce_sum(w * w)
    optimizer = tf.train.AdamOptimizer(0.1)
    keep = tf.placeholder(tf.bool, shape=w.shape)
    backup = tf.Variable(tf.zeros_like(w), trainable=False)
{save}
    with tf.control_dependencies([restore]):
      train = tf.assign(w, tf.where(keep, w, backup))
    sess = tf.Session()
    for _ in range(10):
      sess.run(train, feed_dict={{keep: mask}})
"""

_STEP = "      step = optimizer.minimize(loss)"


def _graph(save):
  return _GRAPH.format(save=save).replace("[restore]", "[step]")


_EAGER = """\
    import tensorflow as tf

    w = tf.Variable(tf.zeros([8, 4]))
    saved = tf.Variable(tf.zeros([8, 4]), trainable=False)
    optimizer = tf.keras.optimizers.Adam()

    class Trainer(object):
      def train_step(self, x):
{save}
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(w * x)
        grads = tape.gradient(loss, [w])
        optimizer.apply_gradients(zip(grads, [w]))
        w.assign(tf.where(self.keep, w, {copy}))

    trainer = Trainer()
    for x in data:
      trainer.train_step(x)
"""

CASES = {
    # SRVC: the backup ops are the step's control dependencies.
    "saved by ops the step waits on": (_graph(
        "    backup_op = tf.assign(backup, w)\n"
        "    with tf.control_dependencies([backup_op]):\n" + _STEP),
        [("write-back", 12)]),
    # The same, the ops kept in a list made by a comprehension.
    "saved by a list of ops the step waits on": (_graph(
        "    saves = [tf.assign(backup, w) for _ in range(1)]\n"
        "    with tf.control_dependencies(saves):\n" + _STEP),
        [("write-back", 12)]),
    # Twin: the copy's op is run once, before training: a kept copy.
    "a copy taken once by an op run before training": (_graph(
        "    take_copy = tf.assign(backup, w)\n"
        "    if True:\n" + _STEP), [("shadow-variable", 12)]),
    # Twin: a copy of another variable saved each step is not this one's.
    "another variable saved each step": (_graph(
        "    other = tf.get_variable('other', [8, 4])\n"
        "    backup_op = tf.assign(backup, other)\n"
        "    with tf.control_dependencies([backup_op]):\n" + _STEP),
        [("shadow-variable", 13)]),
    # An eager train step saving the weights as its first statement.
    "saved as a train step's first statement": (_EAGER.format(
        save="        saved.assign(w)", copy="saved"), [("write-back", 14)]),
    # Twin: the copy is never taken again: kept since it was made.
    "a kept copy in an eager step": (_EAGER.format(
        save="        pass", copy="saved"), [("shadow-variable", 14)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_saved_each_step_are_a_write_back(name):
  code, expected = CASES[name]
  found = [f for f in scanned.in_text(code) if f[0] in {
      "shadow-variable", "write-back", "weight-remask"}]
  assert found == expected
