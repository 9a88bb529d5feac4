"""Part thirty-seven's false positives, each silenced by what the code
does, with the twin that stays found.

- A Keras callback's helper that masks weights and writes them back, run
  from `on_train_end`, stays reported (the final read of the round: `fit`
  called again in a loop trains the masked weights on; the rule that
  silenced it was taken back), as from `on_batch_end` or `on_epoch_end`.
- A tape's gradient of some variables passed straight to `tf.print` (a
  notebook's look at it), a statement of its own: shown and dropped, it
  trains nothing; bound to a name and applied, it stays found.
"""

import pytest

import scanned

# A callback that zeroes the weights of a fixed mask and writes them back,
# through a helper of its own, from the hook HOOK.
_CALLBACK = '''
import numpy as np
import tensorflow as tf

class Masker(tf.keras.callbacks.Callback):
    def __init__(self, keep):
        super().__init__()
        self.keep = keep

    def mask_out(self, weight):
        current = weight.read_value()
        weight.assign(current * self.keep)

    def HOOK(self, *args, **kwargs):
        for layer in self.model.layers:
            self.mask_out(layer.kernel)

model = tf.keras.Sequential([tf.keras.layers.Dense(3), tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
x = np.zeros((8, 3), np.float32)
y = np.zeros((8, 1), np.float32)
keep = np.ones((3, 3), np.float32)
keep[0] = 0.0
model.fit(x, y, epochs=3, callbacks=[Masker(keep)])
'''

# A callback that prunes one element at a time, keeping each zero the
# validation loss allows (the mask chosen by evaluation), from HOOK.
_PRUNER = '''
import numpy as np
import tensorflow as tf

class Pruner(tf.keras.callbacks.Callback):
    def __init__(self, data):
        super().__init__()
        self.data = data

    def prune(self, weight):
        current = weight.read_value()
        base = self.model.evaluate(self.data, verbose=0)
        for i in range(int(tf.size(weight))):
            mask = np.ones(int(tf.size(weight)), dtype=np.float32)
            mask[i] = 0.0
            mask = mask.reshape(current.shape)
            weight.assign(current * mask)
            if self.model.evaluate(self.data, verbose=0) <= base:
                current *= mask
        weight.assign(current)

    def report(self, weight):
        return self.prune(weight)

    def HOOK(self, *args, **kwargs):
        for layer in self.model.layers:
            self.report(layer.kernel)

model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
x = np.zeros((8, 3), np.float32)
y = np.zeros((8, 1), np.float32)
model.fit(x, y, epochs=3, callbacks=[Pruner((x, y))])
'''


def _remasks(code):
  return [line for idiom, line in scanned.found(code)
          if idiom == "weight-remask"]


@pytest.mark.parametrize("code", [_CALLBACK, _PRUNER])
def test_a_callbacks_helper_run_when_training_ends_stays_found(code):
  assert _remasks(code.replace("HOOK", "on_train_end")) != []


@pytest.mark.parametrize("hook", ["on_batch_end", "on_epoch_end"])
def test_the_same_helper_run_while_the_model_trains_stays_found(hook):
  assert _remasks(_CALLBACK.replace("HOOK", hook)) == [12]


def test_a_helper_also_run_while_training_stays_found():
  code = _CALLBACK.replace("HOOK", "on_train_end") + '''
class Both(Masker):
    def on_epoch_end(self, epoch, logs=None):
        self.mask_out(self.model.layers[0].kernel)
'''
  assert _remasks(code) == [12]


# Three variables trained together by a tape's step, after a first look
# at the gradient of two of them: LOOK.
_LOOKED_AT = '''
import tensorflow as tf

a = tf.Variable([1.0, 0.0])
b = tf.Variable([1.0, 1.0])
op = tf.Variable([0.0, 1.0])
target = tf.constant(1.0)

with tf.GradientTape(persistent=True) as tape:
    loss = tf.nn.l2_loss(tf.reduce_sum(a * b * op) - target)
LOOK
opt = tf.keras.optimizers.SGD(1e-2)
for i in range(100):
    with tf.GradientTape() as tape:
        loss = tf.nn.l2_loss(tf.reduce_sum(a * b * op) - target)
    variables = [a, b, op]
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))
'''


@pytest.mark.parametrize("look", [
    "tf.print(tape.gradient(loss, [a, b]))",
    "tf.print(tape.gradient(loss, [a, b]), tape.gradient(loss, op))",
    "tf.summary.histogram('g', tape.gradient(loss, [a, b]))"])
def test_a_gradient_of_some_variables_only_printed_is_silent(look):
  assert [f for f in scanned.found(_LOOKED_AT.replace("LOOK", look))
          if f[0] == "var-list-filter"] == []


def test_the_same_gradient_applied_stays_found():
  applied = ("opt0 = tf.keras.optimizers.SGD(1e-2)\n"
             "grads = tape.gradient(loss, [a, b])\n"
             "tf.print(grads)\n"
             "opt0.apply_gradients(zip(grads, [a, b]))")
  assert [f for f in scanned.found(_LOOKED_AT.replace("LOOK", applied))
          if f[0] == "var-list-filter"] != []
