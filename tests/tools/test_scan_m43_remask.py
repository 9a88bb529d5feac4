"""`tfpartial scan`, part thirty-seven's `weight-remask` forms as mended:
a callback's helper fill counts only in a hook `fit` runs with each
batch or epoch, of a Keras `Callback` (through the project's classes),
with no test making it run once, written into the model `fit` trains
(`self.model`); a constraint's number added at zeroed positions counts
only when the zeroing comes before the sum and the sum is what
`__call__` returns, judged in one pass."""

import pytest

import scanned
from test_scan_t60_remask37 import _CONSTRAINT, _callback

_HOOK = """class Fix(tf.keras.callbacks.Callback):
  def on_batch_end(self, batch, logs=None):
    kernel, bias = self.model.layers[0].get_weights()
    kernel = centre_fix(np.array(kernel))
    self.model.layers[0].set_weights([kernel, bias])"""


def _hook(body, head="class Fix(tf.keras.callbacks.Callback):"):
  """The test callback with its class line and hook replaced."""
  return _callback().replace(_HOOK, head + "\n" + body)


_ON_TRAIN_BEGIN = _hook("""  def on_train_begin(self, logs=None):
    kernel, bias = self.model.layers[0].get_weights()
    kernel = centre_fix(np.array(kernel))
    self.model.layers[0].set_weights([kernel, bias])""")

_FIRST_EPOCH = _hook("""  def on_epoch_begin(self, epoch, logs=None):
    if epoch == 0:
      kernel, bias = self.model.layers[0].get_weights()
      kernel = centre_fix(np.array(kernel))
      self.model.layers[0].set_weights([kernel, bias])""")

_FLAGGED = _hook("""  def __init__(self):
    super().__init__()
    self.ran = False

  def on_batch_end(self, batch, logs=None):
    if self.ran:
      return
    kernel, bias = self.model.layers[0].get_weights()
    kernel = centre_fix(np.array(kernel))
    self.model.layers[0].set_weights([kernel, bias])
    self.ran = True""")

_OTHER_MODEL = _hook("""  def __init__(self, other):
    super().__init__()
    self.other = other

  def on_epoch_end(self, epoch, logs=None):
    kernel, bias = self.model.layers[0].get_weights()
    kernel = centre_fix(np.array(kernel))
    self.other.layers[0].set_weights([kernel, bias])""").replace(
        "callbacks=[Fix()]",
        "callbacks=[Fix(tf.keras.models.clone_model(model))]")

_LOADED = _callback().replace(_HOOK, """def load(net, path):
  net.load_weights(path)
  kernel, bias = net.layers[0].get_weights()
  kernel = centre_fix(np.array(kernel))
  net.layers[0].set_weights([kernel, bias])""").replace(
      "model.fit(x, y, callbacks=[Fix()])",
      "load(model, 'init.h5')\nmodel.fit(x, y)")

_OWN_CALLBACK = _hook(_HOOK.split("\n", 1)[1], head="""class Callback(object):
  pass


class Fix(Callback):""")

_THROUGH_BASE = _hook(_HOOK.split("\n", 1)[1].replace(
    "on_batch_end", "on_epoch_end"), head="""class Base(tf.keras.callbacks.Callback):
  pass


class Fix(Base):""")

_LAYER_BY_NAME = _callback().replace(
    "self.model.layers[0].set_weights",
    "self.model.get_layer('conv').set_weights").replace(
        "Conv2D(3, 5)", "Conv2D(3, 5, name='conv')")

_OFFSET_FIRST = _CONSTRAINT.replace("""    keep[c, c, :, :] = 0
    w = w * keep
""", "").format(tail="""centre = np.zeros(shape)
    centre[c, c, :, :] = 1
    w = w - centre
    keep[c, c, :, :] = 0
    w = w * keep
    return w""")

_SUM_NOT_RETURNED = _CONSTRAINT.format(tail="""centre = np.zeros(shape)
    centre[c, c, :, :] = 1
    tf.print(tf.reduce_sum(tf.square(w - centre)))
    return w""")

_SUM_RETURNED_BY_NAME = _CONSTRAINT.replace(
    "w = w * keep", "w *= keep").format(tail="""centre = np.zeros(shape)
    centre[c, c, :, :] = 1
    fixed = w - centre
    return fixed""")

_RESHAPED = _CONSTRAINT.replace(
    "w = w / tf.reduce_sum(w, [0, 1], keepdims=True)",
    "w = tf.math.divide(w, tf.reduce_sum(w, [0, 1], keepdims=True))").format(
        tail="""centre = np.zeros(shape)
    centre[c, c, :, :] = 1
    w = tf.math.subtract(w, centre)
    return tf.reshape(w, shape)""")

FOUND = {
    "a constraint returning the reshaped sum, rescaled by divide": (
        _RESHAPED, 12),
    "a helper fill in on_epoch_end of a callback through a project base": (
        _THROUGH_BASE, 23),
    "a helper fill into a layer of self.model got by name": (
        _LAYER_BY_NAME, 19),
    "a constraint returning the zeroed weight less a one-hot by a name": (
        _SUM_RETURNED_BY_NAME, 12),
}

SILENT = {
    "a helper fill in on_train_begin": _ON_TRAIN_BEGIN,
    "a helper fill at epoch 0 only": _FIRST_EPOCH,
    "a helper fill behind a flag set after its first run": _FLAGGED,
    "a helper fill in a load function called once": _LOADED,
    "a helper fill set into another model than the one trained": (
        _OTHER_MODEL),
    "a helper fill in a project class named Callback": _OWN_CALLBACK,
    "a constraint adding the offset before it zeroes": _OFFSET_FIRST,
    "a constraint whose sum is only printed": _SUM_NOT_RETURNED,
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_mended_form_is_still_found(name):
  code, line = FOUND[name]
  assert scanned.found(code) == [("weight-remask", line)]


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_form_the_mend_rules_out_is_silent(name):
  assert scanned.found(SILENT[name]) == []


def _shifts(n):
  """A constraint zeroing the centre, then adding `n` arrays of zeros
  each holding a number somewhere."""
  return _CONSTRAINT.format(tail="".join(f"""z{i} = np.zeros(shape)
    z{i}[c, {i % 5}, :, :] = 0.5
    w = w + z{i}
    """ for i in range(n)) + "return w")


def test_the_constraint_offset_work_grows_linearly():
  small, large = (scanned.scan_work(_shifts(n), "_constraint_fills.py")
                  for n in (10, 40))
  assert 0 < small and large <= 5 * small, (small, large)

