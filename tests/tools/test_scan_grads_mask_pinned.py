"""`tfpartial scan`'s `grads-mask` on a gradient multiplied by one minus
its variable's entry in a table of what to pin (`1 - fixed[name]`, the
table holding 1 for the elements that must not train), under a test that
picks the variables the table lists (PsychRNN's `fixed_weights`). The
look-alikes stay silent: a table of rates or multipliers, an entry used
as a scale, a complement applied to every gradient alike. Synthetic
sources in the shape of real code (parts eighteen to twenty-five)."""

import pytest
import scanned


_TF1 = """\
    class RNN:
      def train(self, train_params):
        fixed = train_params.get('fixed_weights', None)
        optimizer = tf.compat.v1.train.AdamOptimizer(0.001)
        grads = optimizer.compute_gradients(self.reg_loss)
        if fixed is not None:
          for i in range(len(grads)):
            (grad, var) = grads[i]
            name = var.name[len(self.name) + 1:-2]
            if name in fixed.keys():
              grad = tf.multiply(grad, {factor})
              grads[i] = (grad, var)
        return optimizer.apply_gradients(grads)
    """


_TF2 = """\
    def train_step(model, optimizer, pinned, x, y):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
      grads = tape.gradient(loss, model.trainable_variables)
      kept = []
      for g, v in zip(grads, model.trainable_variables):
        if v.name in pinned:
          part = {factor}
          g = g * part
        kept.append(g)
      optimizer.apply_gradients(zip(kept, model.trainable_variables))
    """


_UNCHOSEN = """\
    def train(loss, table, epoch):
      opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
      grads_and_vars = opt.compute_gradients(loss)
      grads_and_vars = [(g * (1 - table[epoch]), v)
                        for g, v in grads_and_vars]
      return opt.apply_gradients(grads_and_vars)
    """


_found = scanned.found


@pytest.mark.parametrize("factor, expected", [
    ("(1 - fixed[name])", [("grads-mask", 11)]),
    ("1. - fixed[name]", [("grads-mask", 11)]),
    ("1 - fixed.get(name, 0)", [("grads-mask", 11)]),
    # The look-alikes: an entry used as a scale, a table of rates.
    ("fixed[name]", []),
    ("1 - decay_rates[name]", []),
    ("1 - lr_mults[name]", []),
    ("(1 - 0.5)", []),
])
def test_tf1_pairs_times_one_minus_a_pinning_table(factor, expected):
  assert _found(_TF1.format(factor=factor)) == expected


@pytest.mark.parametrize("factor, expected", [
    ("1.0 - pinned[v.name]", [("grads-mask", 9)]),
    ("1 - pinned.get(v.name, 0.)", [("grads-mask", 9)]),
    # The look-alikes: a momentum and a scale per variable.
    ("1.0 - momentum[v.name]", []),
    ("pinned[v.name]", []),
])
def test_tf2_tape_times_one_minus_a_pinning_table(factor, expected):
  assert _found(_TF2.format(factor=factor)) == expected


def test_a_complement_applied_to_every_gradient_alike_is_silent():
  assert _found(_UNCHOSEN) == []
