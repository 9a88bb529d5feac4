"""`tfpartial scan`, part thirty-seven's `weight-remask` forms: Bayar's
constrained convolution, each kernel's centre set back to -1 after every
batch by a Keras callback (through a helper that writes the number into
the weights read out) or by a Keras constraint (the centre zeroed by a
mask, then a one-hot of it taken off). Each has a silent twin: a
projection chosen by the weights' values, a helper that only rescales,
the reset written once before training, a callback that only evaluates,
a constraint that only normalises."""

import pytest

import scanned

_CALLBACK = """\
import numpy as np
import tensorflow as tf


def {helper}(w):
  c = w.shape[0] // 2
  for i in range(w.shape[-1]):
    w[c, c, :, i] = 0
    for k in range(w.shape[-2]):
      w[:, :, k, i] /= w[:, :, k, i].sum()
    {fill}
  return w


class Fix(tf.keras.callbacks.Callback):
  def {hook}(self, batch, logs=None):
    kernel, bias = self.model.layers[0].get_weights()
    kernel = {helper}(np.array(kernel))
    self.model.layers[0].set_weights([kernel, bias])


model = tf.keras.Sequential([tf.keras.layers.Conv2D(3, 5),
                             tf.keras.layers.Flatten(),
                             tf.keras.layers.Dense(2)])
model.compile("adam", "mse")
model.fit(x, y, callbacks=[Fix()])
"""

_CENTRE = "w[c, c, :, i] = -1"


def _callback(fill=_CENTRE, hook="on_batch_end", helper="centre_fix"):
  return _CALLBACK.format(fill=fill, hook=hook, helper=helper)


# Made once and set before training: an initial value, not a reset.
_ONCE = """\
import numpy as np
import tensorflow as tf


def centre_fix(w):
  c = w.shape[0] // 2
  for i in range(w.shape[-1]):
    w[c, c, :, i] = -1
  return w


model = tf.keras.Sequential([tf.keras.layers.Conv2D(3, 5),
                             tf.keras.layers.Flatten(),
                             tf.keras.layers.Dense(2)])
model.layers[0].set_weights([centre_fix(np.random.rand(5, 5, 1, 3)),
                             np.zeros(3)])
model.compile("adam", "mse")
model.fit(x, y)
"""

_CONSTRAINT = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras.constraints import Constraint


class CentreFixed(Constraint):
  def __call__(self, w):
    shape = w.shape
    c = shape[0] // 2
    keep = np.ones(shape)
    keep[c, c, :, :] = 0
    w = w * keep
    w = w / tf.reduce_sum(w, [0, 1], keepdims=True)
    {tail}


model = tf.keras.Sequential([
    tf.keras.layers.Conv2D(3, 5, kernel_constraint=CentreFixed()),
    tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
model.compile("adam", "mse")
model.fit(x, y)
"""

_ONE_HOT = """centre = np.zeros(shape)
    centre[c, c, :, :] = 1
    return w - centre"""

FOUND = {
    "a callback setting the centre back to -1 through a helper": (
        _callback(), 19),
    "a callback setting a padding row back to zeros": (
        _callback(fill="w[0] = 0"), 19),
    "a constraint taking a one-hot of the zeroed centre off": (
        _CONSTRAINT.format(tail=_ONE_HOT), 12),
}

SILENT = {
    "a callback's helper that only rescales": _callback(fill="pass"),
    "a callback's helper zeroing what the values choose": _callback(
        fill="w[w < 0] = 0"),
    "a callback that only evaluates": _callback(hook="on_test_batch_end"),
    "the centre set once before training": _ONCE,
    "a constraint that only normalises": _CONSTRAINT.format(
        tail="return w"),
    "a constraint adding a constant to every element": _CONSTRAINT.format(
        tail="return w - np.ones(shape)"),
    "a constraint adding a number where it did not zero": (
        _CONSTRAINT.format(tail=_ONE_HOT.replace("[c, c, :, :] = 1",
                                                 "[0, 0, :, :] = 1"))),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_an_element_set_back_to_a_fixed_value_each_step_is_found(name):
  code, line = FOUND[name]
  assert scanned.found(code) == [("weight-remask", line)]


@pytest.mark.parametrize("name", sorted(SILENT))
def test_its_twin_is_silent(name):
  assert scanned.found(SILENT[name]) == []


def _callbacks(n):
  """`n` callbacks that set the centre back through one helper."""
  return _callback() + "".join(f"""

class Fix{i}(tf.keras.callbacks.Callback):
  def on_batch_end(self, batch, logs=None):
    kernel, bias = self.model.layers[{i}].get_weights()
    kernel = centre_fix(np.array(kernel))
    self.model.layers[{i}].set_weights([kernel, bias])
""" for i in range(n))


@pytest.mark.parametrize("make, where", [
    (_callbacks, "_helper_fills.py")])
def test_the_work_grows_linearly(make, where):
  small, large = (scanned.scan_work(make(n), where) for n in (5, 20))
  assert 0 < small and large <= 5 * small, (small, large)
