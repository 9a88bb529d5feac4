"""`tfpartial scan`'s `weight-remask` on part thirty-nine's wavelet
thresholding constraint (`AlphaConstraint`): the weight max-normed into
a local name, then that copy multiplied by its own sign test (`m *
cast(m >= 0)`, `relu(m)`): a projection computed anew after every
update, as `w * cast(w >= 0)` is. A magnitude threshold (`abs(m) >
0.01`, a pruning mask, mend 40), a test of positions (`rows >= 10`), a
test of another value (a stored mask, a module global, a helper's
mask), a statistic of the weight (`low = min(w)`, mend 40's shift), or
a name bound again between the test and the product keeps the
finding."""

import pytest

import scanned
from test_scan_remask_constraint_fills import _class

SILENT = {
    "the max-normed weight's sign kept (AlphaConstraint)": _class("""\
        norms = tf.sqrt(tf.reduce_sum(tf.square(w)))
        desired = tf.clip_by_value(norms, 0., 5.)
        m = w * (desired / (1e-7 + norms))
        return m * tf.cast(tf.greater_equal(m, 0.), tf.float32)"""),
    "AlphaConstraint as written, its cap a number at construction": _class(
        """\
        norms = K.sqrt(tf.math.reduce_sum(tf.math.square(w)))
        desired = K.clip(norms, 0, self.max_value)
        m = w * (desired / (K.epsilon() + norms))
        return m * tf.dtypes.cast(tf.math.greater_equal(m, 0.), K.floatx())"""
    ).replace("    def __call__", "    def __init__(self, max_value=5):\n"
              "        self.max_value = max_value\n\n    def __call__").replace(
                  "Kept()", "Kept(5.0)").replace(
                      "import tensorflow as tf", "import tensorflow as tf\n"
                      "import tensorflow.keras.backend as K"),
    "a scaled copy's sign kept": _class("""\
        m = 2. * w
        kept = m * tf.cast(m >= 0., m.dtype)
        return kept"""),
}

FOUND = {
    "a copy times a mask made beside the weight": _class("""\
        m = w
        keep = tf.cast(w * 0. + self.mask > 0., w.dtype)
        return m * keep"""),
    "a copy times a test of a stored mask": _class("""\
        m = w * 1.
        return m * tf.cast(m * self.mask >= 0., m.dtype)"""),
    "a copy times a test of a module global": _class("""\
        m = w * 1.
        return m * tf.cast(m + MASK > 0., m.dtype)""").replace(
            "class Kept", "MASK = tf.constant([0., 1.])\n\n\nclass Kept"),
    "the weight's own name bound to a stored mask": _class("""\
        m = w * 1.
        w = tf.cast(self.mask > 0., m.dtype)
        return m * w"""),
    "a factor read from a stored array": _class("""\
        m = w * self.scale
        return m * tf.cast(m >= 0., m.dtype)""").replace(
            "    def __call__", "    def __init__(self, path):\n"
            "        self.scale = np.load(path)\n\n    def __call__").replace(
                "import tensorflow as tf", "import numpy as np\n"
                "import tensorflow as tf"),
    "a stored mask over the weight's norm": _class("""\
        norms = tf.sqrt(tf.reduce_sum(tf.square(w)))
        return w * (self.mask / norms)"""),
    "a copy times a helper's mask imported from outside": _class("""\
        m = w * 1.
        return m * mask_of(m)""").replace(
            "import tensorflow as tf", "import tensorflow as tf\n"
            "from pruning import mask_of"),
    "a magnitude threshold on a copy": _class("""\
        m = w * 1.
        return m * tf.cast(tf.abs(m) > 0.01, m.dtype)"""),
    "a threshold hidden under a test against zero": _class("""\
        m = w * 1.
        return m * tf.cast(tf.nn.relu(tf.abs(m) - 0.01) > 0., m.dtype)"""),
    "a test of positions": _class("""\
        rows = tf.range(0, tf.shape(w)[0])
        keep = tf.cast(tf.expand_dims(rows >= 10, 1), w.dtype)
        return w * keep"""),
    "the weight's name bound again between its test and the product": _class(
        """\
        keep = tf.cast(w >= 0., w.dtype)
        w = self.mask
        return w * keep"""),
    # A copy scaled by anything not made of the weight and numbers
    # alone: where that factor is zero the element stays zero (read
    # t62-fp39, M1).
    "a copy scaled by a cast of a stored mask": _class("""\
        m = w * tf.cast(self.mask > 0, w.dtype)
        return m * tf.cast(m >= 0., m.dtype)"""),
    "a copy scaled by a loaded array": _class("""\
        m = w * np.load('keep.npy')
        return m * tf.cast(m >= 0., m.dtype)""").replace(
            "import tensorflow as tf", "import numpy as np\n"
            "import tensorflow as tf"),
    "a copy scaled by a constant of a loaded array": _class("""\
        m = w * tf.constant(np.load('keep.npy'))
        return m * tf.cast(m >= 0., m.dtype)""").replace(
            "import tensorflow as tf", "import numpy as np\n"
            "import tensorflow as tf"),
    "a copy scaled by an imported helper's mask of the weight": _class(
        """\
        m = w * mask_of(w)
        return m * tf.cast(m >= 0., m.dtype)""").replace(
            "import tensorflow as tf", "import tensorflow as tf\n"
            "from pruning import mask_of"),
    "a copy divided by a stored mask": _class("""\
        m = w / self.mask
        return m * tf.cast(m >= 0., m.dtype)"""),
    "a cap given a loaded array at construction": _class("""\
        norms = K.sqrt(tf.math.reduce_sum(tf.math.square(w)))
        m = w * (K.clip(norms, 0, self.cap) / norms)
        return m * tf.cast(m >= 0., m.dtype)""").replace(
            "    def __call__", "    def __init__(self, cap):\n"
            "        self.cap = cap\n\n    def __call__").replace(
                "Kept()", "Kept(np.load('cap.npy'))").replace(
                    "import tensorflow as tf", "import numpy as np\n"
                    "import tensorflow as tf\n"
                    "import tensorflow.keras.backend as K"),
    "a copy scaled by a per-row threshold of the weight": _class("""\
        m = w * tf.maximum(tf.abs(w) - 0.01, 0.)
        return m * tf.cast(m >= 0., m.dtype)"""),
    "a shift by the weight's own minimum (mend 40)": _class("""\
        low = tf.reduce_min(w, axis=0, keepdims=True)
        return w - low * tf.cast(low < 0., w.dtype)"""),
    "a test bound twice, the second time of a stored mask": _class("""\
        m = w * 1.
        keep = tf.cast(m > 0., w.dtype)
        if self.flag:
          keep = tf.cast(self.mask > 0., w.dtype)
        return m * keep"""),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_projection_through_local_names_is_silent(name):
  assert scanned.found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_mask_from_elsewhere_is_found(name):
  found = scanned.found(FOUND[name])
  assert [idiom for idiom, _ in found] == ["weight-remask"], found


def _many_products(n):
  """A constraint keeping the sign of `n` scaled copies of its weight."""
  lines = [f"m{i} = w * {i + 1}.\n        r{i} = m{i} * tf.cast(m{i} >= 0., "
           f"m{i}.dtype)" for i in range(n)]
  total = " + ".join(f"r{i}" for i in range(n))
  return _class("        " + "\n        ".join(lines) + f"\n        return "
                f"{total}")


def test_many_products_are_silent():
  assert scanned.found(_many_products(3)) == []


def test_each_product_costs_the_same():
  # The function's bindings are read once per function and each local
  # name once per factor: a walk of the function per product would make
  # this x16, not x4.
  small, large = (scanned.scan_work(_many_products(n), "_sign_kept.py")
                  for n in (10, 40))
  assert 0 < small and large <= 6 * small, (small, large)
