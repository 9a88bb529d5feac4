"""`tfpartial scan`: a gradient of some variables only fetched to look at
(`sess.run([train_op, loss] + grads)` and printed) beside a step that
applies `compute_gradients` of the same loss on every variable is no
step: nothing applies it, so its hand-written list freezes nothing
(trungtrinh44/tf-auxiliary's demo of a layer-wise rate). Its twin stays
found: the same list's gradient applied, the rest of its loss's
variables left out."""

import pytest

import scanned

_FETCHED = """\
    import tensorflow as tf
    x = tf.placeholder(tf.float32, [None, 5])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable(tf.zeros([5, 1]))
    b = tf.Variable(tf.zeros([1]))
    w2 = tf.Variable(tf.zeros([5, 1]))
    b2 = tf.Variable(tf.zeros([1]))
    loss = tf.reduce_mean((tf.matmul(x, w) + b - y) ** 2)
    loss2 = tf.reduce_mean((tf.matmul(x, w2) + b2 - y) ** 2)
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    pairs = optimizer.compute_gradients(loss) + (
        optimizer.compute_gradients(loss2))
    train_op = optimizer.apply_gradients(pairs)
    grads2 = tf.gradients(loss2, [w2, b2])
    with tf.Session() as sess:
      for _ in range(10):
        _, l, *gv = sess.run([train_op, loss] + grads2)
        print(l, gv)
    """

_APPLIED = _FETCHED.replace("""\
    pairs = optimizer.compute_gradients(loss) + (
        optimizer.compute_gradients(loss2))
    train_op = optimizer.apply_gradients(pairs)
    grads2 = tf.gradients(loss2, [w2, b2])
""", """\
    pairs = optimizer.compute_gradients(loss)
    grads2 = tf.gradients(loss2, [w2])
    train_op = optimizer.apply_gradients(pairs + list(zip(grads2, [w2])))
""")

CASES = {
    "a gradient only fetched beside compute_gradients of every variable": (
        _FETCHED, []),
    "the same list's gradient applied, the rest left out": (
        _APPLIED, [("var-list-filter", 12)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_gradient_only_looked_at_is_no_step(name):
  code, expected = CASES[name]
  assert scanned.found(code) == expected
