"""`tfpartial scan`: a file named like a test is a training script when
its syntax tree runs something and no test framework, read the way the
project reads the file, whatever was parsed first.

A Python 2 script named `layer_test.py` (`print "demo"` under its
`__main__` guard) does not parse as Python 3; the scanner reads such a
file through its rewrite. Whether it was a script was decided from a
plain parse, which failed, so it counted as a test and its fixed-mask
product went unreported, unless another check had parsed the file first
(a package copied as the repository's root, looked up by its name):
the finding depended on the order of reads (round forty-five's read of
t62-speed). Fails on de1ba36: the two scripts without the package.
"""

import pytest

import scanned

_LAYER = """\
    import numpy as np
    import tensorflow as tf
    {framework}
    mask = np.load("mask.npy")


    class Gated(tf.keras.layers.Layer):
      def build(self, shape):
        self.kernel = self.add_weight("kernel", [4, 4])

      def call(self, x):
        return tf.matmul(x, self.kernel * mask)


    if __name__ == "__main__":
      print "demo"
      {run}
    """

_SCRIPT = _LAYER.format(framework="", run="Gated()(np.ones([1, 4]))")
_TEST = _LAYER.format(framework="import unittest",
                      run="unittest.main()")

FOUND = {
    "a Python 2 script named like a test": {
        "layer_test.py": _SCRIPT, "other.py": "import os\n"},
    "the same script named test_layer.py": {
        "test_layer.py": _SCRIPT},
}

# A test whose test case and runner do not parse: read without those
# blocks, what is left (a top-level loop) looks like a script. A file the
# project reads only without blocks stays a test (the final read of
# round forty-five: the first version of the fix reported it).
_BROKEN_TEST = """\
    import numpy as np
    import tensorflow as tf
    mask = np.load("mask.npy")


    class Gated(tf.keras.layers.Layer):
      def build(self, shape):
        self.kernel = self.add_weight("kernel", [4, 4])

      def call(self, x):
        return tf.matmul(x, self.kernel * mask)


    for i in range(2):
      pass


    class T(tf.test.TestCase):
      def test_a(self):
        y = = 1


    if __name__ == "__main__":
      tf.test.main(
    """

SILENT = {
    "a Python 2 test running unittest": {"layer_test.py": _TEST},
    "a test whose case and runner do not parse": {
        "layer_test.py": _BROKEN_TEST},
    "the same, imported by another module": {
        "layer_test.py": _BROKEN_TEST,
        "other.py": "import layer_test\n"},
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_python2_script_named_like_a_test_is_scanned(name):
  files = FOUND[name]
  found = [f for f in scanned.in_project(files)
           if f[0] == "stop-gradient-mix"]
  assert [f[1] for f in found] == [p for p in files if "layer" in p]


@pytest.mark.parametrize("name", sorted(SILENT))
def test_python2_test_stays_a_test(name):
  assert scanned.in_project(SILENT[name]) == []
