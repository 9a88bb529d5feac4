"""`tfpartial scan`'s `grads-mask` in a Keras 2 `get_updates` after
review 38: a step flag among the multiplied factors of a masked update
keeps it a schedule only when no other factor picks elements; a mask
read (`self.masks[p.name]`, inline or through a name) or a comparison
of positions (`K.arange(n) >= 100`) beside the flag stays a mask."""

import pytest

import scanned

_HEAD = """\
from keras import backend as K
from keras.optimizers import Optimizer

class MaskedAccumulate(Optimizer):
  def get_updates(self, loss, params):
    grads = self.get_gradients(loss, params)
    self.updates = [(self.iterations, self.iterations + 1)]
    t = self.iterations + 1
    flag = K.cast(K.equal({count} % self.accum_iters, 0), 'float32')
    for p, g in zip(params, grads):
"""

FOUND = {
    "a mask through a name times a flag through a name": _HEAD.format(
        count="t") + """\
      m = self.masks[p.name]
      p_t = p - self.lr * g * m * flag
      self.updates.append(K.update(p, p_t))
    return self.updates
""",
    "a mask through a name times a flag written inline": _HEAD.format(
        count="(self.iterations + 1)") + """\
      m = self.masks[p.name]
      p_t = p - self.lr * g * m * flag
      self.updates.append(K.update(p, p_t))
    return self.updates
""",
    "a mask read inline times the flag": _HEAD.format(count="t") + """\
      m = 0
      p_t = p - self.lr * g * self.masks[p.name] * flag
      self.updates.append(K.update(p, p_t))
    return self.updates
""",
    "rows compared with a position times the flag": _HEAD.format(
        count="t") + """\
      rows = K.cast(K.arange(0, K.int_shape(p)[0]) >= 100, 'float32')
      mask = flag * K.expand_dims(rows, -1)
      p_t = p - self.lr * g * mask
      self.updates.append(K.update(p, p_t))
    return self.updates
""",
}

SILENT = {
    "the flag alone, with the rate and a setting": _HEAD.format(
        count="t") + """\
      m = 0
      p_t = p - self.lr * g * flag / self.accum_iters
      self.updates.append(K.update(p, p_t))
    return self.updates
""",
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_mask_beside_a_step_flag_stays_a_mask(name):
  assert scanned.in_text(FOUND[name], "grads-mask") == [("grads-mask", 12)]


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_step_flag_with_settings_only_is_a_schedule(name):
  assert scanned.in_text(SILENT[name], "grads-mask") == []
