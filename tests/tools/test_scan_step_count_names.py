"""`tfpartial scan`'s `grads-mask` in a Keras 2 optimizer's `get_updates`
whose factor compares the step count read through a local name (`t =
self.iterations + 1`, then `K.equal(t % self.accum_iters, 0)`): one value
for every element, a gradient-accumulating optimizer's schedule, not a
mask. Beside it, the masks that stay found: a local name bound to a
weight's magnitude, a step count compared with a weight."""

import pytest

import scanned

_ACCUMULATING = """\
from keras import backend as K
from keras.optimizers import Optimizer

class AdamAccumulate(Optimizer):
  def get_updates(self, loss, params):
    grads = self.get_gradients(loss, params)
    self.updates = [(self.iterations, self.iterations + 1)]
    t = {count}
    lr_t = self.lr * K.sqrt(1. - K.pow(self.beta_2, t))
    gs = [K.zeros(K.int_shape(p)) for p in params]
    flag = K.equal({compared}, 0)
    flag = K.cast(flag, dtype='float32')
    for p, g, gg in zip(params, grads, gs):
      gg_t = (1 - flag) * (gg + g)
      p_t = p - flag * lr_t * (gg + flag * g) / self.accum_iters
      self.updates.append((gg, gg_t))
      self.updates.append(K.update(p, p_t))
    return self.updates
"""

SILENT = {
    "updates every n steps, the count read through a local name":
        _ACCUMULATING.format(count="self.iterations + 1",
                             compared="t % self.accum_iters"),
    "the count cast, then read through a local name": _ACCUMULATING.format(
        count="K.cast(self.iterations, 'float32') + 1",
        compared="t % self.accum_iters"),
}

FOUND = {
    # The name holds a weight's magnitude: the comparison picks elements.
    "a local name bound to the weights' magnitude": (
        _ACCUMULATING.format(count="K.abs(params[0])",
                             compared="t - self.thresh"), 15),
    # The step count grows a threshold the weight is compared with.
    "a step count compared with a weight": (
        _ACCUMULATING.format(count="self.iterations + 1",
                             compared="K.abs(params[0]) - self.thresh * t"),
        15),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_step_count_read_through_a_name_is_a_schedule(name):
  assert scanned.in_text(SILENT[name], "grads-mask") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_comparison_of_weights_stays_a_mask(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "grads-mask") == [("grads-mask", line)]
