"""`tfpartial scan` on a `tf.custom_gradient` whose gradient is cut where
the forward input saturates (`dy * tf.cast(-1 < x < 1, tf.float32)`, a
binarized network's straight-through estimator, part 25's tframe
`Binarize`): the range is tested anew on the values every call, no
element is chosen, nothing is frozen. Beside it, the twins that stay
found: a fixed mask, a test of equality (`x != 0`: the pruned elements),
a bound from outside the function, a range of positions.

Sections:
- the range test written in the `return` (`TEST`, `MASK` left as 1.0);
- the same test first bound to a local name (`m = MASK`, `return dy *
  m * 0.5`, part 30's kws-bnn `binary_activation`, t52-fpq), silent and
  its twins found (m39: a test read through `tf.shape`/`tf.range`, and
  `tf.abs(w) > 0`, the same elements as `w != 0`, in both forms)."""

import pytest

import scanned

_BASE = """\
    import tensorflow as tf

    limit = tf.constant(1.0)
    mask = tf.constant([1.0] * 10)

    @tf.custom_gradient
    def binarize(x):
      def grad(dy):
        m = MASK
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
  code = _BASE.replace("MASK", "1.0").replace("TEST", test)
  assert scanned.in_text(code) == []


@pytest.mark.parametrize("test", [
    "mask",
    "tf.cast(tf.not_equal(x, 0), tf.float32)",
    "tf.cast(x != 0, tf.float32)",
    "tf.cast(tf.abs(x) <= limit, tf.float32)",
    "tf.cast(tf.range(10) >= 3, tf.float32)",
    "tf.cast(tf.range(tf.shape(x)[0]) >= 3, dy.dtype)[:, None]",
    "tf.cast(tf.abs(x) > 0, dy.dtype)",
], ids=["fixed_mask", "not_equal", "ne", "outer_bound", "positions",
        "shape_positions", "abs_above_zero"])
def test_a_chosen_mask_in_the_gradient_is_still_found(test):
  code = _BASE.replace("MASK", "1.0").replace("TEST", test)
  assert scanned.in_text(code) == [("grads-mask", 10)]


# --- the range test bound to a local name first ---

@pytest.mark.parametrize("mask,returned", [
    ("tf.cast(tf.abs(x) <= 1.0, dy.dtype)", "m * 0.5"),
    ("tf.cast(tf.abs(x) <= 1.0, dy.dtype)", "m"),
    ("tf.cast(-1.0 < x < 1.0, tf.float32)", "m"),
    ("tf.cast(tf.less_equal(tf.abs(x), 1.0), tf.float32)", "0.5 * m"),
], ids=["scaled", "bound", "chained", "by_call"])
def test_a_saturation_cut_bound_to_a_name_is_silent(mask, returned):
  code = _BASE.replace("MASK", mask).replace("TEST", returned)
  assert scanned.in_text(code) == []


@pytest.mark.parametrize("mask", [
    "mask",
    "tf.cast(tf.not_equal(x, 0), tf.float32)",
    "tf.cast(tf.abs(x) <= limit, tf.float32)",
    "tf.cast(tf.range(10) >= 3, tf.float32)",
    "tf.cast(tf.range(tf.shape(x)[0]) >= 3, dy.dtype)[:, None]",
    "tf.cast(tf.abs(x) > 0, dy.dtype)",
    "tf.cast(tf.abs(x) <= 0, dy.dtype)",
], ids=["fixed_mask", "not_equal", "outer_bound", "positions",
        "shape_positions", "abs_above_zero", "abs_at_zero"])
def test_a_chosen_mask_bound_to_a_name_is_still_found(mask):
  code = _BASE.replace("MASK", mask).replace("TEST", "m * 0.5")
  assert scanned.in_text(code) == [("grads-mask", 10)]
