"""`tfpartial scan`: a layer's non-trainable 0/1 mask variable of ones,
whatever its name, written by a whole model's `set_weights` (a pruning
round zeroes entries of the `get_weights()` list and sets it back) from
the class's module or one that imports the class, and run: its product
with the kernel in the forward pass is a fixed mask. The look-alikes stay
silent: a notebook's mask variable of ones that nothing writes at all
(even named `mask`: all ones, it masks nothing; nothing imports a
notebook, so every write is in sight), a `set_weights` in a method
nothing calls, one in a module that never names the class."""

import pytest

import scanned

_LAYER = """\
    import tensorflow as tf

    class MaskedConv(tf.keras.layers.Layer):
      def __init__(self, shape):
        super().__init__()
        self.w = self.add_weight(shape=shape, initializer="glorot_uniform",
                                 trainable=True, name="w")
        self.m = self.add_weight(shape=shape, initializer="ones",
                                 trainable=False, name="m")

      def call(self, inputs):
        return tf.nn.conv2d(inputs, tf.multiply(self.w, self.m), 1, "SAME")
    """

_MODEL = """\
    import numpy as np
    import tensorflow as tf
    from .layers import MaskedConv

    class Net(tf.keras.Model):
      def __init__(self):
        super().__init__()
        self.conv = MaskedConv((3, 3, 3, 8))

      def call(self, x):
        return self.conv(x)

      def prune_smallest(self, ratio):
        weights = self.get_weights()
        w, m = weights[0], weights[1]
        cut = np.quantile(np.abs(w), ratio)
        m[np.abs(w) < cut] = 0
        self.set_weights(weights)
    """

_TRAIN = """\
    from pkg.models import Net

    model = Net()
    model.compile("adam", "mse")
    for ratio in (0.2, 0.4, 0.6):
      model.prune_smallest(ratio)
      model.fit(x, y, epochs=5)
    """


def _mixes(files):
  return [(path, line) for idiom, path, line in scanned.in_project(files)
          if idiom == "stop-gradient-mix"]


POSITIVE = {
    # FlorianMerkle/network-pruning-and-robustness: the layers module
    # holds no write; the model module that imports the layer prunes
    # through get_weights / set_weights and the script retrains.
    "a mask `m` written by set_weights in a module importing the layer": (
        {"pkg/__init__.py": "", "pkg/layers.py": _LAYER,
         "pkg/models.py": _MODEL, "train.py": _TRAIN},
        [("pkg/layers.py", 12)]),
    # The same in one file: the pruning round runs at the top.
    "a mask `m` written by set_weights in its own module": (
        {"t.py": _LAYER + """\

    layer = MaskedConv((3, 3, 3, 8))
    model = tf.keras.Sequential([layer])
    model.compile("adam", "mse")
    weights = model.get_weights()
    weights[1][:, :, :, :4] = 0
    model.set_weights(weights)
    model.fit(x, y)
    """}, [("t.py", 12)]),
}

NEGATIVE = {
    # A notebook's masked layer whose mask nothing ever writes: named a
    # mask, but all ones; the model trains unmasked.
    "a notebook's mask named so that nothing writes": {
        "t.ipynb": _LAYER.replace("self.m", "self.mask") + """\

    model = tf.keras.Sequential([MaskedConv((3, 3, 3, 8))])
    model.compile("adam", "mse")
    model.fit(x, y)
    """},
    # The pruning round is defined but nothing runs it.
    "set_weights in a method nothing calls": {
        "pkg/__init__.py": "", "pkg/layers.py": _LAYER,
        "pkg/models.py": _MODEL, "train.py": _TRAIN.replace(
            "      model.prune_smallest(ratio)\n", "")},
    # A module that sets weights of its own models, never naming the class.
    "set_weights in a module that never names the class": {
        "pkg/__init__.py": "", "pkg/layers.py": _LAYER,
        "pkg/other.py": """\
    import tensorflow as tf

    def average(models):
      first = models[0]
      first.set_weights([sum(ws) / len(ws) for ws in zip(
          *[m.get_weights() for m in models])])

    average([a, b])
    """},
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_mask_a_whole_model_write_prunes_is_found(name):
  files, expected = POSITIVE[name]
  assert _mixes(files) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_mask_of_ones_nothing_writes_is_silent(name):
  assert _mixes(NEGATIVE[name]) == []
