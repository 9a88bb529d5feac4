"""`tfpartial scan`: a `self.` list filtered by scope and then replaced,
in the same method's straight-line code, by the variables of
`zip(*opt.compute_gradients(loss))` (every variable) before the step
reads it is no filter of that step (shlizee/Predict-Cluster's notebook).
Its twin stays found: the filtered list passed to `compute_gradients`."""

import pytest

import scanned

_REPLACED = """\
    import tensorflow as tf

    class Model(object):
      def __init__(self, x, lr):
        with tf.variable_scope("prediction"):
          with tf.variable_scope("encoder"):
            h = tf.layers.dense(x, 8)
          with tf.variable_scope("decoder"):
            out = tf.layers.dense(h, 4)
          self.loss = tf.reduce_mean(out ** 2)
        self.pred_vars = tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, "prediction/encoder")
        opt = tf.train.AdamOptimizer(lr)
        gradients, self.pred_vars = zip(*opt.compute_gradients(self.loss))
        clipped, _ = tf.clip_by_global_norm(gradients, 25)
        self.updates = opt.apply_gradients(zip(clipped, self.pred_vars))
    """

_FILTERED = _REPLACED.replace(
    "gradients, self.pred_vars = zip(*opt.compute_gradients(self.loss))",
    "gradients, _ = zip(*opt.compute_gradients(\n"
    "            self.loss, var_list=self.pred_vars))")

CASES = {
    "a filtered list replaced by every variable before the step": (
        _REPLACED, []),
    "the filtered list passed to the step": (
        _FILTERED, [("var-list-filter", 11)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_replaced_attribute_list_is_not_the_steps(name):
  code, expected = CASES[name]
  assert scanned.found(code) == expected
