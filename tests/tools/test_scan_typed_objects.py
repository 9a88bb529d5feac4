"""`tfpartial scan` on objects whose class the code reaches indirectly: a
model passed to a function (typed by its call sites), a part behind a
property or in a dict, a Sonnet module whose `trainable = False` freezes
nothing. The twins stay silent: call sites that pass two classes, a Keras
part that `trainable = False` does freeze."""

import pytest
import scanned


_MODULES = """\
    import sonnet as snt
    import tensorflow as tf

    class Block(snt.Module):
      def __call__(self, x):
        return x

    class Keras(tf.keras.layers.Layer):
      def call(self, x):
        return x

    class Net(snt.Module):
      def __init__(self):
        super().__init__()
        self._trunk = Block()

      @property
      def trunk(self):
        return self._trunk

      def get_trunk(self):
        return self._trunk

    class Parts(snt.Module):
      def __init__(self):
        super().__init__()
        self.parts = {'body': Block(), 'other': Keras()}
        self.filled = {}
        for name in ('a', 'b'):
          self.filled[name] = Block()
    """

# finetune-enformer: the trunk of a restored Sonnet model, its
# `trainable = False` a plain attribute; only the head is trained.
_HEAD_ON_TRUNK = """\
    import sonnet as snt
    import tensorflow as tf
    from models import Net, Keras, Block, Parts

    def finetune(data, channels):
      original = {original}
      trunk = {trunk}
      trunk.trainable = False
      head = tf.keras.layers.Dense(channels)
      model = Sequential([trunk, head])
      optimizer = snt.optimizers.Adam(1e-3)
      for x, y in data:
        with tf.GradientTape() as tape:
          error = tf.reduce_mean(tf.square(model(x) - y))
        gradient = tape.gradient(error, head.trainable_variables)
        optimizer.apply(gradient, head.trainable_variables)
    """

# The same, the trunk handed in by the callers.
_HANDED_IN = """\
    import sonnet as snt
    import tensorflow as tf
    from models import Net, Keras, Block, Parts

    def finetune(trunk, data):
      trunk.trainable = False
      head = tf.keras.layers.Dense(3)
      model = Sequential([trunk, head])
      optimizer = snt.optimizers.Adam(1e-3)
      for x, y in data:
        with tf.GradientTape() as tape:
          error = tf.reduce_mean(tf.square(model(x) - y))
        gradient = tape.gradient(error, head.trainable_variables)
        optimizer.apply(gradient, head.trainable_variables)

    {calls}
    """

_FOUND = [("var-list-filter", "train.py", 15)]
_FOUND_HANDED_IN = [("var-list-filter", "train.py", 13)]


def _scan(train):
  return scanned.in_project({"models.py": _MODULES, "train.py": train})


@pytest.mark.parametrize("original, trunk, expected", [
    # Sonnet: the line freezes nothing, the head is trained alone.
    ("Net()", "original._trunk", _FOUND),
    ("Net()", "original.trunk", _FOUND),
    ("Net()", "Block()", _FOUND),
    ("Net()", "original.get_trunk()", _FOUND),
    ("Parts()", "original.parts['body']", _FOUND),
    ("Parts()", "original.filled['a']", _FOUND),
    ("Net()", "snt.Sequential([Block()])", _FOUND),
    # Keras: the line freezes the trunk already.
    ("Net()", "Keras()", []),
    ("Parts()", "original.parts['other']", []),
    ("Net()", "tf.keras.Sequential([Keras()])", []),
    # Unknown class: as before, a freeze.
    ("load()", "original._trunk", []),
    ("load()", "original.parts['body']", []),
], ids=["sonnet-attribute", "sonnet-property", "sonnet-made",
        "sonnet-getter", "sonnet-dict-entry", "sonnet-dict-filled",
        "sonnet-library", "keras-made", "keras-dict-entry", "keras-library",
        "unknown", "unknown-dict"])
def test_sonnet_trainable_false_freezes_nothing(original, trunk, expected):
  assert _scan(_HEAD_ON_TRUNK.format(
      original=original, trunk=trunk)) == expected


@pytest.mark.parametrize("calls, expected", [
    ("finetune(Block(), [])", _FOUND_HANDED_IN),
    ("finetune(trunk=Net().trunk, data=[])", _FOUND_HANDED_IN),
    ("finetune(Block(), [])\nfinetune(Block(), [1])", _FOUND_HANDED_IN),
    ("finetune(Keras(), [])", []),
    # Two classes passed: unknown, the line counts as a freeze.
    ("finetune(Block(), [])\nfinetune(Keras(), [])", []),
], ids=["positional", "keyword-property", "agreeing",
        "keras", "two-classes"])
def test_parameter_typed_by_its_call_sites(calls, expected):
  assert _scan(_HANDED_IN.format(calls=calls)) == expected


def test_parameter_rebound_in_its_function_is_unknown():
  rebound = _HANDED_IN.replace(
      "      trunk.trainable = False\n",
      "      trunk = wrap(trunk)\n      trunk.trainable = False\n")
  assert _scan(rebound.format(calls="finetune(Block(), [])")) == []
  assert _scan(_HANDED_IN.format(calls="finetune(Block(), [])")) == (
      _FOUND_HANDED_IN)
