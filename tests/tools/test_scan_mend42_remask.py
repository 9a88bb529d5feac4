"""`tfpartial scan`'s mend of t59-remask (review of 042d81dc, 1caa64c6):
a constraint class attached through a registry, a decorator, a name
read from a config, or a use whose line holds a `#` in a string stays
found (the "never attached" rule judges only a scatter constraint that
nothing names, comments included, and that has no decorator); a name
cycle in a scatter's positions ends; a structural mask held in a
non-trainable weight (a block, half the columns) and a held mask
assigned from each batch stay silent; the module text is read once per
scan, however many constraint classes it holds. Each source is
synthetic (the reviewer's probes, reduced)."""

import sys
import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_MULTIPLY = """\
class FixedMaskConstraint(tf.keras.constraints.Constraint):

    def __init__(self, mask):
        self.mask = tf.constant(mask, tf.float32)

    def __call__(self, w):
        return w * self.mask
"""

_TRAIN = """\
model.compile('adam', 'mse')
model.fit(x, y)
"""

FOUND = {
    # s1: a decorator registry, the key from the command line.
    "a constraint registered by a decorator": ("""\
import argparse
import numpy as np
import tensorflow as tf

REGISTRY = {}


def register(name):
    def deco(cls):
        REGISTRY[name] = cls
        return cls
    return deco


@register('fixed')
""" + _MULTIPLY + """

parser = argparse.ArgumentParser()
parser.add_argument('--constraint', default='fixed')
args = parser.parse_args()
mask = np.load('pruned_mask.npy')
model = tf.keras.Sequential([tf.keras.layers.Dense(
    4, kernel_constraint=REGISTRY[args.constraint](mask))])
""" + _TRAIN, 22),
    # s3: a `#` inside a string on the line that attaches it.
    "a constraint attached on a line with a '#' in a string": ("""\
import numpy as np
import tensorflow as tf


""" + _MULTIPLY + """

mask = np.load('pruned_mask.npy')
model = tf.keras.Sequential([
    tf.keras.layers.Dense(4, name="fc#1", kernel_constraint=FixedMaskConstraint(mask))])
""" + _TRAIN, 11),
    # s5: the class fetched by a name a config gives.
    "a constraint fetched by getattr from a config's name": ("""\
import sys
import numpy as np
import tensorflow as tf
import yaml


""" + _MULTIPLY + """

cfg = yaml.safe_load(open('config.yaml'))
constraint_cls = getattr(sys.modules[__name__], cfg['constraint'])
mask = np.load('pruned_mask.npy')
model = tf.keras.Sequential([tf.keras.layers.Dense(4, kernel_constraint=constraint_cls(mask))])
""" + _TRAIN, 13),
    # s7: registered as serializable, attached by a saved architecture.
    "a constraint registered as serializable, loaded from json": ("""\
import numpy as np
import tensorflow as tf


@tf.keras.utils.register_keras_serializable(package='pruning')
""" + _MULTIPLY + """
    def get_config(self):
        return {'mask': self.mask.numpy().tolist()}


model = tf.keras.models.model_from_json(open('pruned_arch.json').read())
model.load_weights('pruned.weights.h5')
""" + _TRAIN, 12),
    # katejarne's CustomConstraint, paraphrased: named in a comment of
    # the script that defines it; comments count, so it stays found.
    "a block constraint named only in a comment": ("""\
import tensorflow as tf
from tensorflow.keras.constraints import Constraint


class Kept(Constraint):

    def __call__(self, w):
        half_in = tf.shape(w)[-1] // 2
        half_rows = tf.shape(w)[0] // 2
        block = w[:half_rows, :half_in]
        block = block * tf.cast(tf.equal(block, 0.), tf.float32)
        rest = w[half_rows:, :half_in]
        return tf.concat([tf.concat([block, rest], 0), w[:, half_in:]], -1)

# recurrent_constraint could be Kept
model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 16)])
""" + _TRAIN, 11),
    # R1: a name cycle in the scatter's positions.
    "a scatter whose positions go round a name cycle": ("""\
import tensorflow as tf


class KeptConstraint(tf.keras.constraints.Constraint):

    def __call__(self, w):
        rows = [[0]]
        for _ in range(2):
            kept = rows
            rows = kept
        return tf.tensor_scatter_nd_update(w, rows, tf.ones((1, 16)))


model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 16, embeddings_constraint=KeptConstraint())])
""" + _TRAIN, 11),
}


@pytest.mark.parametrize("code,line", FOUND.values(), ids=list(FOUND))
def test_an_attached_constraint_is_found(code, line):
  assert scanned.found(code) == [("weight-remask", line)]


_SCATTER = """\
import tensorflow as tf


{head}class KeptConstraint(tf.keras.constraints.Constraint):

    def __call__(self, w):
        return tf.tensor_scatter_nd_update(w, [[0]], tf.ones((1, 16)))


{use}model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 16)])
""" + _TRAIN


def test_a_scatter_constraint_nothing_names_is_silent():
  assert scanned.found(_SCATTER.format(head="", use="")) == []


@pytest.mark.parametrize("head,use", [
    ("@tf.keras.utils.register_keras_serializable()\n", ""),
    ("", "# embeddings_constraint=KeptConstraint()\n"),
    ("", "kind = getattr(sys.modules[__name__], 'KeptConstraint')\n"),
], ids=["decorated", "named in a comment", "named in a string"])
def test_a_scatter_constraint_named_or_decorated_is_found(head, use):
  line = 8 if head else 7
  assert scanned.found(_SCATTER.format(head=head, use=use)) == [
      ("weight-remask", line)]


_LAYER = """\
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Layer


class MaskedDense(Layer):

    def __init__(self, units, **kwargs):
        self.units = units
        super(MaskedDense, self).__init__(**kwargs)

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units),
                                      initializer='glorot_uniform', trainable=True)
        self.mask = np.{start}((input_shape[-1], self.units), dtype=np.float32)
{write}        self.mask = self.add_weight("mask", (input_shape[-1], self.units),
                                    initializer=tf.initializers.Constant(self.mask),
                                    trainable=False)
{method}
    def call(self, inputs):
        return tf.matmul(inputs, self.kernel * self.mask)


{model}model.compile(loss='mse', optimizer='adam')
{fit}
"""

SILENT = {
    # K3: a block of the kernel masked, from the shapes alone.
    "a block mask held in a non-trainable weight": _LAYER.format(
        start="ones",
        write="        self.mask[:input_shape[-1] // 2, self.units // 2:]"
        " = 0.0\n", method="",
        model="model = tf.keras.Sequential([MaskedDense(8), MaskedDense(1)])\n",
        fit="model.fit(x, y)"),
    # K5: half the columns kept, from the layer's units.
    "half the columns held in a non-trainable weight": _LAYER.format(
        start="zeros",
        write="        self.mask[:, :self.units // 2] = 1.0\n", method="",
        model="model = tf.keras.Sequential([MaskedDense(8), MaskedDense(1)])\n",
        fit="model.fit(x, y)"),
    # P1: the held mask assigned from each batch's mask.
    "a held mask assigned from each batch": _LAYER.format(
        start="ones", write="",
        method="\n    def set_mask(self, batch_mask):\n"
        "        self.mask.assign(batch_mask)\n",
        model="layer = MaskedDense(8)\n"
        "model = tf.keras.Sequential([layer])\n",
        fit="for x, y, dropmask in batches():\n"
        "    layer.set_mask(dropmask)\n"
        "    model.train_on_batch(x, y)"),
}


@pytest.mark.parametrize("code", SILENT.values(), ids=list(SILENT))
def test_a_structural_or_batch_mask_is_silent(code):
  assert scanned.found(code) == []


def _many(n):
  """`n` scatter constraints nothing names, in a module that trains,
  with text growing with `n`."""
  classes = "".join(
      f"class Keep{i}Constraint(tf.keras.constraints.Constraint):\n"
      f"    def __call__(self, w):\n"
      f"        return tf.tensor_scatter_nd_update(w, [[0]], "
      f"tf.ones((1, 16)))\n\n\n" for i in range(n))
  pad = "".join(f"x{i} = {i}\n" for i in range(20 * n))
  return ("import tensorflow as tf\n\n\n" + classes + pad +
          "model = tf.keras.Sequential([tf.keras.layers.Dense(4)])\n"
          + _TRAIN)


def _text_scans(n):
  """The regular-expression scans of whole texts `_constraint_fills`
  makes in a scan of `_many(n)`."""
  count = [0]

  def profile(frame, event, arg):
    if event == "c_call" and frame.f_code.co_filename.endswith(
        "_constraint_fills.py") and getattr(arg, "__name__", "") in {
            "findall", "sub", "search"}:
      count[0] += 1

  sys.setprofile(profile)
  try:
    findings = _scan.scan_project([_files.Source("big.py", _many(n))])
  finally:
    sys.setprofile(None)
  assert not findings[0]
  return count[0]


def test_the_module_text_is_read_once_however_many_classes():
  # Each class read the whole text again (x12.6 time at 4N): the text
  # scans now stay as many at 4N classes as at N.
  assert _text_scans(40) <= _text_scans(10) <= 4
