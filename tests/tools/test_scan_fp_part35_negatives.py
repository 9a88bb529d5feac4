"""`tfpartial scan` on part 35's negatives: population-based training's
explore step (`def explore(h): return h.assign(h + noise)`, called on a
hyperparameter made `trainable=False`, angusfung/population-based-
training) moves a setting no optimizer trains, so it is no write-back.
So is a kept copy a helper writes into an untrainable variable. The
twins stay findings: the same helper handed a trained weight, or handed
the untrainable variable at one call and a trained one at another."""

import pytest

import scanned

_PBT = """\
    import tensorflow as tf

    theta = tf.get_variable("theta", initializer=tf.random_uniform([2]))
    h = tf.get_variable("h", initializer=tf.random_uniform([2]),
                        trainable=False)
    loss = tf.reduce_sum(h * tf.square(theta))
    train_step = tf.train.AdamOptimizer(0.1).minimize(loss)

    def explore(h):
      return h.assign(h + tf.random_normal(shape=[2]) * 0.1)

    do_explore = explore({given})
    with tf.Session() as sess:
      for step in range(50):
        sess.run(train_step)
        if step % 5 == 0:
          sess.run(do_explore)
    """

_KEPT = """\
    import tensorflow as tf

    theta = tf.get_variable("theta", initializer=tf.random_uniform([2]))
    h = tf.get_variable("h", initializer=tf.random_uniform([2]),
                        trainable=False)
    loss = tf.reduce_sum(h * tf.square(theta))
    train_step = tf.train.AdamOptimizer(0.1).minimize(loss)

    def put_back(v, kept):
      return v.assign(tf.where(tf.range(2) < 1, kept, v))

    restore = {calls}
    with tf.Session() as sess:
      for step in range(50):
        sess.run(train_step)
        sess.run(restore)
    """

CASES = {
    # PBT's explore: the hyperparameter, untrainable, moved by noise.
    "an untrainable hyperparameter explored through a helper": (
        _PBT.format(given="h"), []),
    # An untrainable copy's first element put back into itself.
    "a kept copy written into an untrainable variable by a helper": (
        _KEPT.format(calls="put_back(h, h)"), []),
    # The twin: the kept copy's element written into the trained weight.
    "a kept copy written into a trained weight by a helper": (
        _KEPT.format(calls="put_back(theta, h)"), [("write-back", 10)]),
    # One call hands the untrainable variable, another the trained one.
    "a helper handed an untrainable variable and a trained one": (
        _KEPT.format(calls="[put_back(h, h), put_back(theta, h)]"),
        [("write-back", 10)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_write_into_what_every_caller_makes_untrainable(name):
  code, expected = CASES[name]
  assert scanned.in_text(code, "write-back") == expected
