"""`tfpartial scan`'s `grads-mask` on the pruning helper much TF1 code
copies (`apply_prune_on_grads`): each gradient multiplied by
`cast(constant(table[key]), float32)`, the stored 0/1 array of the
variable's kept elements. The look-alikes stay silent: a literal or a
number set in the function is a scale, not a table's entry. Synthetic
sources in the shape of real code (part thirteen)."""

import pytest
import scanned


_PRUNED = """\
    def apply_prune_on_grads(grads_and_vars, dict_widx):
      scale = 0.5
      for key, widx in dict_widx.items():
        count = 0
        for grad, var in grads_and_vars:
          if var.name == key:
            index = tf.cast(tf.constant({data}), tf.float32)
            grads_and_vars[count] = (tf.multiply(index, grad), var)
          count += 1
      return grads_and_vars

    def train(loss, dict_widx):
      opt = tf.train.GradientDescentOptimizer(0.1)
      grads = opt.compute_gradients(loss)
      grads = apply_prune_on_grads(grads, dict_widx)
      return opt.apply_gradients(grads)
    """


_found = scanned.found


@pytest.mark.parametrize("data, expected", [
    ("widx", [("grads-mask", 8)]),
    ("sess.run(dict_widx[key])", [("grads-mask", 8)]),
    # The look-alikes: a scale, not a stored array of kept elements.
    ("0.5", []),
    ("scale", []),
])
def test_a_gradient_times_a_stored_array_made_float(data, expected):
  assert _found(_PRUNED.format(data=data)) == expected
