"""`tfpartial scan`: the mends of review 37's must-fix 3 and 4 and two of
its should-fix items, each a reduced program with its twin.

- A Keras 2 optimizer's factor that compares the step count is a
  schedule only where the comparison reads nothing but the step count,
  numbers and the optimizer's settings (`K.equal((self.iterations + 1)
  % self.accum_iters, 0)`); a pruning mask whose threshold grows with
  the step (`K.greater(K.abs(p), self.thresh * self.iterations)`) reads
  the weight: a mask, found as its `self.step` twin is; so is a mask's
  entry compared, even scaled by a test of the step count.
- Two models' weights unpacked, mixed and set back as a list
  (`e_frozen.set_weights([w, b])`) are an EMA only where the factor is a
  number where the helper is called and the model written is not the
  one a step trains: a mask handed in, or the student written, stays a
  re-mask.
- Zeros written where a gradient is `None` fill a missing gradient only
  where the guard tests the entry written (`grads[i]`, or the same entry
  of `list(grads)`), not another list's.
- A loop over `enumerate(ws)` with many writes of `ws[i]`: the work of
  reading the loops grows with the writes, not with their square.
"""

import pytest

import scanned

_GET_UPDATES = """\
from keras import backend as K
from keras.optimizers import SGD

class MaskedSGD(SGD):
  def get_updates(self, loss, params):
    grads = self.get_gradients(loss, params)
    self.updates = []
    for p, g in zip(params, grads):
      keep = K.cast({compared}, "float32")
      self.updates.append(K.update(p, p - self.lr * g * keep))
    return self.updates
"""

_EMA = """\
import tensorflow as tf

def main(m, data, opt, args, masks):
  for idx, (x, y) in enumerate(data):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((m.student(x) - m.teacher(x)) ** 2)
    weights = m.student.trainable_weights
    grads = tape.gradient(loss, weights)
    opt.apply_gradients(zip(grads, weights))
    frozen_beta = args.frozen_beta

    def update_frozen(e, e_frozen, mask):
      w_new, b_new = e.get_weights()
      w, b = e_frozen.get_weights()
      w = {formula}
      b = b * frozen_beta + b_new * (1 - frozen_beta)
      {target}.set_weights([w, b])

    for i in range(3):
      update_frozen(m.student.layers[i], m.teacher.layers[i], {passed})
"""

_FILLED = """\
import tensorflow as tf

class DPOptimizer(tf.compat.v1.train.GradientDescentOptimizer):
  def compute_gradients(self, loss, var_list, frozen=None, **kwargs):
    grads, _ = zip(*super().compute_gradients(loss, var_list))
    grads_list = list(grads)
    for inx in range(0, len(grads)):
      if {test}:
        {written}[inx] = tf.zeros_like(var_list[inx])
    return list(zip(grads_list, var_list))

  def minimize(self, loss, var_list):
    pairs = self.compute_gradients(loss, var_list)
    return self.apply_gradients(pairs)
"""

SILENT = {
    "an accumulating optimizer gated by the step count": _GET_UPDATES.format(
        compared="K.equal((self.iterations + 1) % self.accum_iters, 0)"),
    "a step count compared, cast to a dtype": _GET_UPDATES.format(
        compared="K.equal(self.iterations % self.accum_iters, "
        "K.cast(self.accum_iters - 1, tf.int64))"),
    "an EMA teacher set from two models, a number passed": _EMA.format(
        formula="w * mask + w_new * (1 - mask)", target="e_frozen",
        passed="0.99"),
    "an EMA teacher set from two models, a setting read": _EMA.format(
        formula="w * frozen_beta + w_new * (1 - frozen_beta)",
        target="e_frozen", passed="masks[i]"),
    "a missing gradient filled in its own list": _FILLED.format(
        test="grads_list[inx] is None", written="grads_list"),
    "a missing gradient filled in a list of the gradients": _FILLED.format(
        test="grads[inx] is None", written="grads_list"),
}

FOUND = {
    # Must-fix 3: the threshold grows with the step, the weight is read.
    "a magnitude mask with a threshold of the step count": (
        _GET_UPDATES.format(compared="K.greater(K.abs(p), self.thresh * "
                            "K.cast(self.iterations, 'float32'))"),
        [("grads-mask", 10)]),
    "its twin, a threshold of another counter": (
        _GET_UPDATES.format(compared="K.greater(K.abs(p), self.thresh * "
                            "K.cast(self.step, 'float32'))"),
        [("grads-mask", 10)]),
    "a mask entry compared with the step count": (
        _GET_UPDATES.format(compared="K.greater(self.masks[p.name], "
                            "K.cast(self.iterations, 'float32'))"),
        [("grads-mask", 10)]),
    "a mask entry scaled by a step-count test, compared": (
        _GET_UPDATES.format(compared="K.not_equal(self.masks[p.name] * "
                            "K.cast(self.iterations > 0, 'float32'), 0)"),
        [("grads-mask", 10)]),
    # Must-fix 4: a mask handed in blends the trained student's weights.
    "a masked blend set into the student": (_EMA.format(
        formula="w_new * mask + w * (1 - mask)", target="e",
        passed="masks[i]"), [("weight-remask", 17)]),
    "a mask handed in blends the teacher": (_EMA.format(
        formula="w * mask + w_new * (1 - mask)", target="e_frozen",
        passed="masks[i]"), [("weight-remask", 17)]),
    "an average written into the student a step trains": (_EMA.format(
        formula="w_new * frozen_beta + w * (1 - frozen_beta)", target="e",
        passed="masks[i]"), [("weight-remask", 17)]),
    # Should-fix: the guard tests another list than the one written.
    "zeros where another list's entry is None": (_FILLED.format(
        test="frozen[inx] is None", written="grads_list"),
        [("grads-mask", 9)]),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_schedule_or_an_average_is_silent(name):
  assert scanned.found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_mask_in_its_place_is_found(name):
  source, expected = FOUND[name]
  assert scanned.found(source) == expected


def _enumerated(count):
  body = "\n".join(f"    ws[i].assign(w * {k}.0)" for k in range(count))
  return f"""\
import tensorflow as tf

def prune(m, opt, data):
  for x, y in data:
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(m(x) - y)
    grads = tape.gradient(loss, m.trainable_weights)
    opt.apply_gradients(zip(grads, m.trainable_weights))
  ws = m.trainable_weights
  for i, w in enumerate(ws):
{body}
"""


def test_entries_of_an_enumerated_list_are_read_in_linear_work():
  # The loops of a scope are read once, not once per write: 4N writes
  # cost about 4x, where reading them per write costs 16x.
  small = scanned.scan_work(_enumerated(50), "_untrained.py")
  large = scanned.scan_work(_enumerated(200), "_untrained.py")
  assert large < 5 * small, (small, large)
