"""`tfpartial scan` on a gradient over a filtered list that is only
added into accumulators no step applies (SNIP's saliency of pruning
masks: `[acc.assign_add(g) for acc, g in zip(saliency, grads)]`): it
measures and trains nothing, silent. Beside it, the same accumulators
then applied to the masks: a step over that list, found."""

import scanned

_SNIP = """\
    import tensorflow as tf

    def get_mask_assign_ops(loss):
      masks = [v for v in tf.global_variables() if 'mask' in v.name]
      with tf.variable_scope('accum_saliency'):
        saliency = [tf.get_variable('saliency_m{}'.format(i), shape=m.shape,
                                    initializer=tf.zeros_initializer(),
                                    trainable=False)
                    for i, m in enumerate(masks)]
        saliency_batch = [s for s in tf.gradients(ys=loss, xs=masks)]
        accum_ops = [sal.assign_add(sal_b)
                     for (sal, sal_b) in zip(saliency, saliency_batch)]
      return accum_ops, saliency
    """


def test_a_gradient_only_accumulated_as_a_saliency_is_silent():
  assert scanned.in_text(_SNIP, "var-list-filter") == []


def test_accumulated_gradients_then_applied_are_found():
  text = _SNIP.replace(
      "      return accum_ops, saliency\n",
      "      step = tf.train.GradientDescentOptimizer(0.1).apply_gradients(\n"
      "          zip(saliency, masks))\n"
      "      return accum_ops, step\n")
  assert [f[0] for f in scanned.in_text(text, "var-list-filter")] == [
      "var-list-filter"]
