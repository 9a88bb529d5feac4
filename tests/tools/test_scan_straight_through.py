"""`tfpartial scan` on a `tf.custom_gradient` whose gradient is cut where
the forward input saturates (`dy * tf.cast(-1 < x < 1, tf.float32)`, a
binarized network's straight-through estimator, part 25's tframe
`Binarize`): the range is tested anew on the values every call, no
element is chosen, nothing is frozen. Beside it, the twins that stay
found: a fixed mask, a test of equality (`x != 0`: the pruned elements),
a bound from outside the function, a range of positions."""

import pytest

import scanned

_BASE = """\
    import tensorflow as tf

    limit = tf.constant(1.0)
    mask = tf.constant([1.0] * 10)

    @tf.custom_gradient
    def binarize(x):
      def grad(dy):
        return dy * TEST
      return tf.sign(x), grad

    w = tf.Variable(tf.random.normal([10, 10]))
    loss = tf.reduce_sum(binarize(w) ** 2)
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    """


@pytest.mark.parametrize("test", [
    "tf.cast(-1 < x < 1.0, tf.float32)",
    "tf.cast(tf.abs(x) <= 1, tf.float32)",
    "tf.cast(tf.math.less_equal(tf.abs(x), 1.0), x.dtype)",
], ids=["chained", "abs", "by_call"])
def test_a_straight_through_cut_at_saturation_is_silent(test):
  assert scanned.in_text(_BASE.replace("TEST", test)) == []


@pytest.mark.parametrize("test", [
    "mask",
    "tf.cast(tf.not_equal(x, 0), tf.float32)",
    "tf.cast(x != 0, tf.float32)",
    "tf.cast(tf.abs(x) <= limit, tf.float32)",
    "tf.cast(tf.range(10) >= 3, tf.float32)",
], ids=["fixed_mask", "not_equal", "ne", "outer_bound", "positions"])
def test_a_chosen_mask_in_the_gradient_is_still_found(test):
  assert scanned.in_text(_BASE.replace("TEST", test)) == [("grads-mask", 9)]
