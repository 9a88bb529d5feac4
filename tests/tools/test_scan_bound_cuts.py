"""`tfpartial scan` reads the bound of a straight-through cut written
as a name (`_custom_gradients`): `tf.abs(w) <= self.clip`, `tf.abs(w) <
clip_value`. A bound is a number of at least 1e-3 when it is

- an attribute the class assigns once, in `__init__`, a number written
  there (`self.clip = 1.0`), or
- a parameter whose default is such a number (of the custom gradient
  function or of one around it), that every call passing it passes a
  number of at least 1e-3 too;

then the test cuts where the input saturates, a straight-through
estimator: silent, like `tf.abs(w) <= 1.0`. Any other bound (a tiny
number, an attribute assigned twice or from a parameter, a parameter
without a default or passed something else) may be a float-safe `w ==
0`, a pruning mask: found, as before.
"""

import pytest

import scanned

# A binarized Keras layer: its kernel's gradient cut where TEST holds.
_LAYER = """\
    import tensorflow as tf

    class Dense(tf.keras.layers.Layer):
      def __init__(self, units, clip=1.0):
        super().__init__()
        self.units = units
        INIT

      def build(self, shape):
        self.kernel = self.add_weight("kernel", [shape[-1], self.units])
        BUILD

      def call(self, x):
        @tf.custom_gradient
        def binarize(w):
          def grad(dy):
            return dy * tf.cast(TEST, dy.dtype)
          return tf.sign(w), grad
        return tf.matmul(x, binarize(self.kernel))
    """


def _layer(init, test="tf.abs(w) <= self.clip", build="pass"):
  return _LAYER.replace("INIT", init).replace("BUILD", build).replace(
      "TEST", test)


@pytest.mark.parametrize("init, test", [
    ("self.clip = 1.0", "tf.abs(w) <= self.clip"),
    ("self.clip = 1", "-self.clip < w < self.clip"),
    ("self.clip = 0.5", "tf.less_equal(tf.abs(w), self.clip)"),
], ids=["abs", "chain", "less_equal"])
def test_an_attribute_set_once_in_init_to_a_number_is_a_cut(init, test):
  assert scanned.found(_layer(init, test)) == []


@pytest.mark.parametrize("init, build", [
    ("self.clip = 1e-8", "pass"),
    ("self.clip = clip", "pass"),
    ("self.clip = 1.0", "self.clip = 1e-8"),
    ("self.clip = 1.0", "self.clip *= 1e-6"),
    ("pass", "self.clip = 1.0"),
], ids=["tiny", "from_a_parameter", "set_again", "scaled_later",
        "set_outside_init"])
def test_an_attribute_not_set_once_in_init_to_a_number_is_found(init, build):
  assert scanned.found(_layer(init, build=build)) == [("grads-mask", 17)]


def test_a_literal_bound_in_the_layer_is_unchanged():
  assert scanned.found(_layer("pass", "tf.abs(w) <= 1.0")) == []
  assert scanned.found(_layer("pass", "tf.abs(w) <= 1e-8")) == [
      ("grads-mask", 17)]


# The custom gradient at module level, its bound a parameter.
_PARAMETER = """\
    import tensorflow as tf

    @tf.custom_gradient
    def binarize(w, PARAMETER):
      def grad(dy):
        return dy * tf.cast(tf.abs(w) < clip_value, dy.dtype)
      return tf.sign(w), grad

    class Dense(tf.keras.layers.Layer):
      def build(self, shape):
        self.kernel = self.add_weight("kernel", [shape[-1], 8])

      def call(self, x):
        return tf.matmul(x, binarize(ARGUMENTS))
    """


def _parameter(parameter, arguments="self.kernel"):
  return _PARAMETER.replace("PARAMETER", parameter).replace(
      "ARGUMENTS", arguments)


@pytest.mark.parametrize("parameter, arguments", [
    ("clip_value=1.0", "self.kernel"),
    ("clip_value=1.0", "self.kernel, clip_value=0.5"),
    ("clip_value=1", "self.kernel, 2.0"),
], ids=["default", "passed_a_number", "passed_by_position"])
def test_a_parameter_of_a_number_is_a_cut(parameter, arguments):
  assert scanned.found(_parameter(parameter, arguments)) == []


@pytest.mark.parametrize("parameter, arguments", [
    ("clip_value=1e-8", "self.kernel"),
    ("clip_value", "self.kernel, 1.0"),
    ("clip_value=1.0", "self.kernel, clip_value=1e-8"),
    ("clip_value=1.0", "self.kernel, 1e-8"),
    ("clip_value=1.0", "self.kernel, clip_value=self.eps"),
    ("clip_value=1.0", "self.kernel, **self.options"),
], ids=["tiny_default", "no_default", "passed_tiny", "passed_tiny_by_position",
        "passed_a_name", "passed_unseen"])
def test_a_parameter_maybe_tiny_is_found(parameter, arguments):
  assert scanned.found(_parameter(parameter, arguments)) == [
      ("grads-mask", 6)]


# The bound a parameter of a function making the custom gradient.
_MAKER = """\
    import tensorflow as tf

    def make_binarize(clip_value=DEFAULT):
      @tf.custom_gradient
      def binarize(w):
        def grad(dy):
          return dy * tf.cast(tf.abs(w) <= clip_value, dy.dtype)
        return tf.sign(w), grad
      return binarize

    class Dense(tf.keras.layers.Layer):
      def build(self, shape):
        self.kernel = self.add_weight("kernel", [shape[-1], 8])

      def call(self, x):
        binarize = make_binarize(ARGUMENTS)
        return tf.matmul(x, binarize(self.kernel))
    """


@pytest.mark.parametrize("default, arguments, found", [
    ("1.0", "", []),
    ("1e-8", "", [("grads-mask", 7)]),
    ("1.0", "1e-8", [("grads-mask", 7)]),
], ids=["default", "tiny_default", "passed_tiny"])
def test_a_parameter_of_the_maker_is_read_the_same(default, arguments, found):
  code = _MAKER.replace("DEFAULT", default).replace("ARGUMENTS", arguments)
  assert scanned.found(code) == found
