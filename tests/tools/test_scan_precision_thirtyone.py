"""`tfpartial scan`: look-alikes of part 31 that freeze nothing, each with
a twin that stays found.

- A Keras 2 optimizer accumulating gradients (`get_updates` with
  `update_switch = K.cast(K.equal((self.iterations + 1) % n, 0))`):
  every update gated by a test of the step count, a schedule of every
  element, as `K.cast(self.iterations > 100)` is; a factor made by
  comparing a mask's own values stays a mask.
- Keras' own step counter written after the step
  (`self._train_counter.assign(tf.cast(self.step, tf.int64))`): a value
  cast to an integer dtype, which no gradient reaches, is a counter.
- A DP optimizer filling a missing gradient with zeros
  (`if grads[i] == None: grads_list[i] = tf.zeros_like(var_list[i])`):
  the variable had no gradient; nothing that would train is zeroed.
- Gradient accumulators reset after the step
  (`accum[i].assign(tf.zeros_like(g))` where `accum = [tf.Variable(
  tf.zeros_like(w)) for w in weights]`): an entry of a list of
  variables set to zeros is a whole accumulator cleared, not elements
  of a weight set back; so is one handed to the step by each call.
- An EMA teacher's layers updated from the student's
  (`w_new, b_new = e.get_weights()`; `w, b = e_frozen.get_weights()`;
  `w = w * beta + w_new * (1 - beta)`; `e_frozen.set_weights([w, b])`):
  two live models averaged, as a list comprehension of `zip` is; the
  student's own weights masked that way stay a re-mask.
- A filter its author asserts leaves nothing out
  (`assert len(m.trainable_weights) - len(kept) == 0`): whole model.
- A helper, run once after training, that moves a layer's bias by the
  mean offset of its predictions on data handed in (basepairmodels'
  `dw, db = layer.get_weights(); layer.set_weights([dw, db + delta])`):
  every value read after the step; a saved copy handed in and put back
  stays a write-back.

Found now: a weight named by its entry of the list a loop enumerates
(`for i, w in enumerate(m.trainable_weights): ...
m.trainable_weights[i].assign(w * wmask)`) after each step is the loop's
`w` re-masked, as `w.assign(w * wmask)` is (mindle714's lottery-ticket
phase); a target network blended the same way, a rewind to saved
weights and a mask made once from magnitudes stay silent.
"""

import pytest

import scanned

_ACCUMULATING = """\
from keras import backend as K
from keras.optimizers import Optimizer

class AccumAdam(Optimizer):
  def get_updates(self, loss, params):
    grads = self.get_gradients(loss, params)
    update_switch = K.equal((self.iterations + 1) % self.accum_iters, 0)
    update_switch = K.cast(update_switch, K.floatx())
    gs = [K.zeros(K.int_shape(p)) for p in params]
    self.updates = []
    for p, g, tg in zip(params, grads, gs):
      sum_grad = tg + g
      self.updates.append(K.update(tg, (1 - update_switch) * sum_grad))
      self.updates.append(K.update(p, p - self.lr * {factor} * sum_grad))
    return self.updates
"""

_MASK_COMPARED = """\
from keras import backend as K
from keras.optimizers import SGD

class MaskedSGD(SGD):
  def get_updates(self, loss, params):
    grads = self.get_gradients(loss, params)
    self.updates = []
    for p, g in zip(params, grads):
      keep = K.cast(K.not_equal(self.masks[p.name], 0), "float32")
      self.updates.append(K.update(p, p - self.lr * g * keep))
    return self.updates
"""

_COUNTER = """\
import tensorflow as tf

class AE(tf.keras.Model):
  def __init__(self, encoder):
    super().__init__()
    self.encoder = encoder
    self.step_index = tf.Variable(0, trainable=False, dtype=tf.int32)
    self.saved = tf.Variable(encoder.kernel, trainable=False)

  def call(self, x):
    return self.encoder(x)

  def train_step(self, data):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(self(data))
    grads = tape.gradient(loss, self.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    self.step_index.assign_add(1)
    self.{target}.assign({value})
    return {{"loss": loss}}
"""

_NONE_FILLED = """\
import tensorflow as tf

class DPOptimizer(tf.compat.v1.train.GradientDescentOptimizer):
  def compute_gradients(self, loss, var_list, **kwargs):
    grads, _ = zip(*super().compute_gradients(loss, var_list))
    grads_list = list(grads)
    for inx in range(0, len(grads)):
      if {test}:
        grads_list[inx] = tf.zeros_like(var_list[inx])
    return list(zip(grads_list, var_list))

  def minimize(self, loss, var_list):
    pairs = self.compute_gradients(loss, var_list)
    return self.apply_gradients(pairs)
"""

_ACCUMULATORS = """\
import tensorflow as tf

m = tf.keras.Sequential([tf.keras.layers.Dense(4)])
opt = tf.keras.optimizers.Adam()
accum_grads = {made}

@tf.function
def run_step(x, y, accum):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean((m(x) - y) ** 2)
  weights = m.trainable_weights
  grads = tape.gradient(loss, weights)
  for idx, grad in enumerate(grads):
    accum_grads[idx].assign_add(grad)
  if not accum:
    opt.apply_gradients(zip(accum_grads, weights))
    for idx, grad in enumerate(grads):
      accum_grads[idx].assign({value})
  return loss
"""

_PASSED = """\
import tensorflow as tf

m = tf.keras.Sequential([tf.keras.layers.Dense(4)])
opt = tf.keras.optimizers.Adam()

def main(data, args):
  accum_grads = [tf.Variable(tf.zeros_like(e)) for e in m.trainable_weights]

  @tf.function
  def run_step(x, y, accum_v2, accum):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((m(x) - y) ** 2)
    weights = m.trainable_weights
    grads = tape.gradient(loss, weights)
    if args.accum_step == 1:
      opt.apply_gradients(zip(grads, weights))
    else:
      for idx, grad in enumerate(grads):
        accum_v2[idx].assign_add(grad)
      if not accum:
        opt.apply_gradients(zip(accum_v2, weights))
        for idx, grad in enumerate(grads):
          accum_v2[idx].assign(tf.zeros_like(grad))
    return loss

  for x, y in data:
    run_step(x, y, {given}, accum=False)
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
      update_frozen(m.student.layers[i], m.teacher.layers[i], masks[i])
"""

_ASSERTED = """\
import tensorflow as tf

m = tf.keras.Sequential([tf.keras.layers.Dense(4, name="head"),
                         tf.keras.layers.Dense(4, name="body_frozen")])
opt = tf.keras.optimizers.Adam()

@tf.function
def run_step(x, y, training=True):
  with tf.GradientTape() as tape:
    total_loss = tf.reduce_mean((m(x) - y) ** 2)
  if training:
    train_weights = [e for e in m.trainable_weights if 'frozen' not in e.name]
    assert len(m.trainable_weights) - len(train_weights) == {left_out}
    grads = tape.gradient(total_loss, train_weights)
    opt.apply_gradients(zip(grads, train_weights))
  return total_loss
"""

_ENTRIES = """\
import tensorflow as tf

def main(m, target, data, opt, masks, tau, saved):
  for idx, (x, y) in enumerate(data):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((m(x) - y) ** 2)
    grads = tape.gradient(loss, m.trainable_weights)
    opt.apply_gradients(zip(grads, m.trainable_weights))
{tail}"""

_REMASKED_ENTRIES = _ENTRIES.format(tail="""\
    for w_idx, w in enumerate(m.trainable_weights):
      wmask = 1.
      if masks[w_idx] is not None: wmask = 1. - masks[w_idx]
      w_masked = w * wmask
      m.trainable_weights[w_idx].assign(w_masked)
""")

_ADJUSTED = """\
import numpy as np

def adjust(bias_model, seqs, cts, name, saved):
    layer = bias_model.get_layer(name)
    _, pred = bias_model.predict(seqs)
    delta = np.mean(np.log(1 + cts.sum(-1)) - pred.ravel())
    dw, db = layer.get_weights()
    layer.set_weights([dw, {bias} + delta])
    return bias_model

def train(model, gen, seqs, cts, epochs):
    saved = model.get_layer("counts").get_weights()
    for epoch in range(epochs):
        model.fit(gen, epochs=1)
    adjust(model, seqs, cts, "counts", saved)
"""

SILENT = {
    "an accumulating Adam gated by the step count": _ACCUMULATING.format(
        factor="update_switch"),
    "Keras' step counter written as an int64": _COUNTER.format(
        target="_train_counter", value="tf.cast(self.step_index, tf.int64)"),
    "a missing gradient filled with zeros (== None)": _NONE_FILLED.format(
        test="grads[inx] == None"),
    "a missing gradient filled with zeros (is None)": _NONE_FILLED.format(
        test="grads[inx] is None"),
    "gradient accumulators cleared after the step": _ACCUMULATORS.format(
        made="[tf.Variable(tf.zeros_like(e)) for e in m.trainable_weights]",
        value="tf.zeros_like(grad)"),
    "accumulators handed to the step and cleared": _PASSED.format(
        given="accum_grads"),
    "an EMA teacher's layers set from two models' weights": _EMA.format(
        formula="w * frozen_beta + w_new * (1 - frozen_beta)",
        target="e_frozen"),
    "a filter asserted to leave nothing out": _ASSERTED.format(left_out=0),
    "a target network's entries blended": _ENTRIES.format(tail="""\
    for i, w in enumerate(target.trainable_weights):
      target.trainable_weights[i].assign(
          w * tau + m.trainable_weights[i] * (1 - tau))
"""),
    "entries rewound to saved weights, masked": _ENTRIES.format(tail="""\
    for w_idx, w in enumerate(m.trainable_weights):
      w = saved[w_idx]
      m.trainable_weights[w_idx].assign(w * masks[w_idx])
"""),
    "a bias moved by a helper after training": _ADJUSTED.format(bias="db"),
    "entries pruned once by magnitude to evaluate": _ENTRIES.replace(
        "masks, ", "").format(tail="""\
  masks = [tf.cast(tf.abs(w) > 0.1, tf.float32) for w in m.trainable_weights]
  for w_idx, w in enumerate(m.trainable_weights):
    m.trainable_weights[w_idx].assign(w * masks[w_idx])
  m.evaluate(data)
"""),
}

FOUND = {
    # The twin of the step count: a factor made by comparing a mask.
    "a mask made by comparing a mask's values": (
        _MASK_COMPARED, [("grads-mask", 10)]),
    # The twin of the counter: a copy cast to a float written back.
    "a float copy written back after the step": (_COUNTER.format(
        target="encoder.kernel", value="tf.cast(self.saved, tf.float32)"),
        [("shadow-variable", 19)]),
    # The twin of the filled gradient: zeros chosen by another test.
    "a gradient zeroed where a mask says": (_NONE_FILLED.format(
        test="frozen[inx]"), [("grads-mask", 9)]),
    # The twin of the accumulators: a kernel's rows set back to zeros.
    "rows of each weight set back to zeros after the step": (
        _ACCUMULATORS.replace(
            "accum_grads[idx].assign({value})",
            "weights[idx][:2].assign({value})").format(
                made="[tf.Variable(tf.zeros_like(e)) for e in "
                "m.trainable_weights]", value="tf.zeros_like(grad[:2])"),
        [("weight-remask", 18)]),
    # The twin of the handed accumulators: the model's weights handed.
    "rows of the weights handed to the step set to zeros": (_PASSED.format(
        given="m.trainable_weights"), [("weight-remask", 23)]),
    # The twin of the EMA: the student's weights masked and set back.
    "the student's layers re-masked": (_EMA.format(
        formula="w_new * mask", target="e"), [("weight-remask", 17)]),
    # The twin of the assert: it says two variables are left out.
    "a filter asserted to leave two out": (
        _ASSERTED.format(left_out=2), [("var-list-filter", 12)]),
    # The twin of the helper: a bias saved before training put back.
    "a saved bias handed to the helper": (
        _ADJUSTED.format(bias="saved[1]"), [("write-back", 8)]),
}

FOUND_NOW = {
    "weights named by their entry re-masked after each step": (
        _REMASKED_ENTRIES, [("weight-remask", 13)]),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_look_alike_of_part_31_is_silent(name):
  assert scanned.found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_its_twin_stays_found(name):
  source, expected = FOUND[name]
  assert scanned.found(source) == expected


@pytest.mark.parametrize("name", sorted(FOUND_NOW))
def test_a_weight_named_by_its_entry_is_found(name):
  source, expected = FOUND_NOW[name]
  assert scanned.found(source) == expected
