"""`tfpartial scan`'s `weight-remask` on part thirty-nine's wavelet
thresholding constraint (`AlphaConstraint`): the weight max-normed into
a local name, then that copy multiplied by its own sign test
(`m * cast(m >= 0)`). Both factors come from the weight alone, through
local names bound once: a projection computed anew after every update,
as `w * cast(w >= 0)` is. A factor that also reads a value made
elsewhere (`self.mask`, a module global), or a name bound twice, keeps
the finding."""

import pytest

import scanned
from test_scan_remask_constraint_fills import _class

SILENT = {
    "the max-normed weight's sign kept (AlphaConstraint)": _class("""\
        norms = tf.sqrt(tf.reduce_sum(tf.square(w)))
        desired = tf.clip_by_value(norms, 0., 5.)
        m = w * (desired / (1e-7 + norms))
        return m * tf.cast(tf.greater_equal(m, 0.), tf.float32)"""),
    "clipped to a maximum the constructor keeps": _class("""\
        norms = tf.sqrt(tf.reduce_sum(tf.square(w)))
        m = w * (tf.clip_by_value(norms, 0., self.max_value) / norms)
        return m * tf.cast(m >= 0., m.dtype)""").replace(
            "    def __call__", "    def __init__(self, max_value=5):\n"
            "        self.max_value = max_value\n\n    def __call__"),
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
  small, large = (scanned.scan_work(_many_products(n), "_weight_alone.py")
                  for n in (10, 40))
  assert 0 < small and large <= 6 * small, (small, large)
