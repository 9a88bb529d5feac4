"""`tfpartial scan`'s `weight-remask` in a Keras constraint that sets
chosen elements of its weight back to constants after every update
(part 36f's H-Mem: an `Encoding` layer's learned table whose constraint
`MaskTimeWord` writes ones into its last row with
`tf.tensor_scatter_nd_update`, so that row never moves while `fit`
trains the rest); and the look-alikes that freeze nothing: constraints
that clip or normalise every element, sign projections from the weights'
own values, connectivity fixed by the shapes (an autapse diagonal, a
block), a mask recomputed from the weights, and a scatter constraint
class defined but named nowhere else. (katejarne's `CustomConstraint`,
named in a comment, stays found: test_scan_mend42_remask.) Each source
is synthetic."""

import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _scan

# H-Mem's layer, paraphrased: the constraint is a class nested in the
# layer, chosen in `__init__` and given to `add_weight`.
_ENCODING = """\
import tensorflow as tf
from tensorflow.keras.constraints import Constraint
from tensorflow.keras.layers import Layer


class Encoding(Layer):

    def __init__(self, kind, constraint='mask_time_word', **kwargs):
        super().__init__(**kwargs)
        self.constraint = self.MaskTimeWord() if constraint == 'mask_time_word' else None

    def build(self, input_shape):
        self.encoding = self.add_weight(shape=(input_shape[-2], input_shape[-1]),
                                        trainable=True, initializer='ones',
                                        constraint=self.constraint, name='encoding')

    def call(self, inputs):
        return tf.reduce_sum(self.encoding * inputs, axis=-2)

    class MaskTimeWord(Constraint):

        def __call__(self, w):
            indices = [[w.shape[0] - 1]]
            updates = {updates}
            new_w = tf.tensor_scatter_nd_update(w, indices, updates)
            return new_w


model = tf.keras.Sequential([Encoding('learned')])
model.compile('adam', 'mse')
model.fit(x, y)
"""

# A constraint class at a module's top level, given by `...constraint=`.
_CLASS = """\
import tensorflow as tf
from tensorflow.keras.constraints import Constraint


class Kept(Constraint):

    def __call__(self, w):
{body}

{use}
"""

_ATTACHED = """\
model = tf.keras.Sequential([tf.keras.layers.Embedding(
    1000, 16, embeddings_constraint=Kept())])
model.compile('adam', 'mse')
model.fit(x, y)"""

_NOT_ATTACHED = """\
model = tf.keras.Sequential([tf.keras.layers.Embedding(1000, 16)])
model.compile('adam', 'mse')
model.fit(x, y)"""


def _class(body, use=_ATTACHED):
  return _CLASS.format(body=body, use=use)


FOUND = {
    # H-Mem layers/encoding.py 67: the last row set back to ones.
    "a nested constraint writing ones into the last row": (
        _ENCODING.format(updates="tf.ones((1, w.shape[1]))"), 25),
    # A padding row spelled as a number, set back to zeros.
    "a constraint writing zeros into row 0": (_class("""\
        return tf.tensor_scatter_nd_update(w, [[0]], tf.zeros((1, 16)))"""),
                                              8),
    # The first rows set to a constant filled to size.
    "a constraint writing a filled constant into chosen rows": (_class("""\
        rows = [[0], [1], [2]]
        return tf.tensor_scatter_nd_update(w, rows, tf.fill((3, 16), 0.5))"""),
                                              9),
}


@pytest.mark.parametrize("code, line", FOUND.values(), ids=list(FOUND))
def test_a_constraint_setting_chosen_elements_back_is_found(code, line):
  assert scanned.found(code) == [("weight-remask", line)]


SILENT = {
    # The same H-Mem constraint class, but nothing ever makes it.
    "a scatter constraint defined but never attached": _class("""\
        return tf.tensor_scatter_nd_update(w, [[0]], tf.ones((1, 16)))""",
                                                            _NOT_ATTACHED),
    # Keras' own constraints: every element clipped or normalised.
    "max_norm, non_neg and unit_norm": """\
import tensorflow as tf
model = tf.keras.Sequential([
    tf.keras.layers.Dense(8, kernel_constraint=tf.keras.constraints.max_norm(2.)),
    tf.keras.layers.Dense(8, kernel_constraint=tf.keras.constraints.NonNeg()),
    tf.keras.layers.Dense(1, kernel_constraint=tf.keras.constraints.UnitNorm())])
model.compile('adam', 'mse')
model.fit(x, y)
""",
    "a constraint clipping the whole tensor": _class("""\
        return tf.clip_by_value(w, -1.0, 1.0)"""),
    "a constraint normalising the whole tensor": _class("""\
        return w / (tf.norm(w, axis=0, keepdims=True) + 1e-7)"""),
    # Dale's law: the sign of each weight kept, from its own value.
    "a Dale's-law sign projection from the weight's own values": _class("""\
        return w * tf.cast(w >= 0., w.dtype)"""),
    "a rectified weight": _class("""\
        return tf.nn.relu(w)"""),
    # Structural connectivity from the shapes: no autapse, a block.
    "an autapse diagonal zeroed by a scatter at shape positions": _class("""\
        n = w.shape[0]
        diagonal = [[i, i] for i in range(n)]
        return tf.tensor_scatter_nd_update(w, diagonal, tf.zeros((n,)))"""),
    "an autapse diagonal zeroed by set_diag": _class("""\
        return tf.linalg.set_diag(w, tf.zeros(w.shape[0]))"""),
    "a block connectivity built from the shapes": """\
import numpy as np
import tensorflow as tf
from tensorflow.keras.constraints import Constraint


class Block(Constraint):

    def __init__(self, n):
        mask = np.ones((n, n), np.float32)
        mask[:n // 2, n // 2:] = 0.0
        self.mask = tf.constant(mask)

    def __call__(self, w):
        return w * self.mask


model = tf.keras.Sequential([tf.keras.layers.SimpleRNN(
    64, recurrent_constraint=Block(64))])
model.compile('adam', 'mse')
model.fit(x, y)
""",
    # A mask recomputed from the weight each step: the largest entry
    # of each row, found anew (it moves as the weights move).
    "rows chosen by the weight's own values": _class("""\
        rows = tf.expand_dims(tf.argmax(tf.reduce_sum(w, 1)), 0)
        return tf.tensor_scatter_nd_update(w, [rows], tf.zeros((1, 16)))"""),
    # The H-Mem class used only to read a saved model.
    "a scatter constraint used only to load a model": _class("""\
        return tf.tensor_scatter_nd_update(w, [[0]], tf.ones((1, 16)))""",
                                                           "model = tf.keras.models.load_model('m.h5', custom_objects={'Kept': Kept})\n"
                                                           "model.predict(x)"),
    # A scatter of the weight's rows into another tensor: the weight is
    # read, not written.
    "a scatter into another tensor": _class("""\
        out = tf.zeros_like(w)
        return tf.tensor_scatter_nd_update(out, [[0]], tf.ones((1, 16))) + w"""),
}


@pytest.mark.parametrize("code", SILENT.values(), ids=list(SILENT))
def test_a_look_alike_is_silent(code):
  assert scanned.found(code) == []


# katejarne's layout: the script defining the constraint is star-imported
# by the script that runs it, which never names the class either.
_SCRIPT = _class("""\
        return tf.tensor_scatter_nd_update(w, [[0]], tf.ones((1, 16)))""",
                 "def train(n):\n"
                 "    model = tf.keras.Sequential([tf.keras.layers.Dense(n)])\n"
                 "    model.compile('adam', 'mse')\n"
                 "    model.fit(x, y)")


def test_a_constraint_a_star_importing_script_never_names_is_silent():
  assert scanned.in_project({
      "main_to_train.py": _SCRIPT,
      "loop.py": "from main_to_train import *\nfor n in [10, 20]:\n"
                 "    train(n)\n"}) == []


def test_a_constraint_a_package_exports_is_found():
  assert scanned.in_project({
      "masks/constraints.py": _SCRIPT,
      "masks/__init__.py": "from .constraints import *\n"}) == [
          ("weight-remask", "masks/constraints.py", 8)]


def test_the_finding_says_which_elements_are_set_back():
  findings = scanned.in_project(FOUND[
      "a nested constraint writing ones into the last row"][0])
  assert findings == [("weight-remask", "t.py", 25)]
  found = _scan.scan_text("t.py", textwrap.dedent(FOUND[
      "a nested constraint writing ones into the last row"][0]))
  assert "set back to `updates` by the constraint `MaskTimeWord`" in (
      found[0].message)
