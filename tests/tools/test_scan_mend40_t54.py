"""`tfpartial scan` after the review of t54-dup (issue 30):

- a straight-through cut's bound written as a name is a grads-mask
  again, as before `_cut_bounds` (removed): the bound can be written
  where that rule never looked (a subclass, `layer.clip = ...` from
  outside, `setattr`, `__dict__.update`), and a function holding a
  parameter bound can be passed around as a value (`functools.partial`,
  an alias, a dict, `fire.Fire`), so a tiny bound, a real freeze of the
  elements near zero, hid behind the default;
- `_pinned` counts a function's own body as one pass of the step only
  when the function runs once per step (a method named `train_step`, one
  a loop of its class calls as `self.<name>(...)`, or a function a loop
  of its module calls by its bare name): a function called once before
  the loop that applies zero gradients to build the slots, then sets a
  start value, is silent;
- `_towers` reads a helper that may fall off its end (or return None)
  as a tower of pairs: the transpose of a list holding None raises, so
  every run that works got pairs from each tower, and the slice keeps
  some variables."""

import pytest

import scanned
import test_scan_tower_helpers as tower_helpers

# The bound of the cut a `self.` attribute set in `__init__` (`INIT`
# more there, `AFTER` more below the class).
_LAYER = """\
import tensorflow as tf

class Dense(tf.keras.layers.Layer):
  def __init__(self, units, config=None):
    super().__init__()
    self.units = units
    self.clip = 1.0
    INIT

  def build(self, shape):
    self.kernel = self.add_weight("kernel", [shape[-1], self.units])

  def call(self, x):
    @tf.custom_gradient
    def binarize(w):
      def grad(dy):
        return dy * tf.cast(tf.abs(w) <= self.clip, dy.dtype)
      return tf.sign(w), grad
    return tf.matmul(x, binarize(self.kernel))

AFTER
"""


@pytest.mark.parametrize("init, after", [
    ("pass", "class Pruned(Dense):\n  def __init__(self, units):\n"
     "    super().__init__(units)\n    self.clip = 1e-8"),
    ("pass", "layer = Dense(4)\nlayer.clip = 1e-8"),
    ("pass", "layer = Dense(4)\nsetattr(layer, 'clip', 1e-8)"),
    ("self.__dict__.update(config)", ""),
    ("for k, v in config.items(): setattr(self, k, v)", ""),
], ids=["subclass", "outside", "setattr", "dict_update", "setattr_loop"])
def test_a_bound_an_attribute_names_is_a_mask(init, after):
  code = _LAYER.replace("INIT", init).replace("AFTER", after)
  assert scanned.found(code) == [("grads-mask", 17)]


# The bound of the cut a parameter of the function around it (`MADE`
# how `call` gets the cut).
_MAKER = """\
import functools
import tensorflow as tf

def make_binarize(clip_value=1.0):
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
    MADE
    return tf.matmul(x, binarize(self.kernel))
"""


@pytest.mark.parametrize("made", [
    "binarize = functools.partial(make_binarize, clip_value=1e-8)()",
    "maker = make_binarize\n    binarize = maker(1e-8)",
    "binarize = {'b': make_binarize}['b'](1e-8)",
], ids=["partial", "alias", "dict"])
def test_a_bound_a_parameter_names_is_a_mask(made):
  assert scanned.found(_MAKER.replace("MADE", made)) == [("grads-mask", 8)]


def test_a_bound_a_command_line_may_pass_is_a_mask():
  code = """\
      import fire
      import tensorflow as tf


      def main(clip_value=1.0, steps=100):
        w = tf.Variable(tf.random.normal([8, 8]))

        @tf.custom_gradient
        def prune(v):
          def grad(dy):
            return dy * tf.cast(tf.abs(v) <= clip_value, dy.dtype)
          return v, grad

        opt = tf.keras.optimizers.SGD(0.1)
        for _ in range(steps):
          with tf.GradientTape() as tape:
            loss = tf.reduce_sum(prune(w) ** 2)
          opt.apply_gradients([(tape.gradient(loss, w), w)])


      if __name__ == "__main__":
        fire.Fire(main)
      """
  assert scanned.found(code) == [("grads-mask", 11)]


_SLOTS = """\
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    opt = tf.keras.optimizers.Adam()


    def build_slots():
      # Create the optimizer's slots once, then set the start value.
      params = model.trainable_variables
      opt.apply_gradients(zip([tf.zeros_like(v) for v in params], params))
      params[-1].assign(0.5)


    def train(data):
      build_slots()
      for x, y in data:
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean((model(x) - y) ** 2)
        params = model.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, params), params))
    """


def test_a_start_value_set_in_a_function_called_once_is_silent():
  assert scanned.found(_SLOTS) == []


def test_the_same_function_called_in_each_pass_is_found():
  code = _SLOTS.replace(
      "  build_slots()\n      for x, y in data:\n",
      "  for x, y in data:\n        build_slots()\n")
  assert scanned.found(code) == [("weight-remask", 11)]


def test_a_keras_train_step_setting_it_back_is_found():
  code = """\
      import tensorflow as tf


      class M(tf.keras.Model):
        def __init__(self):
          super().__init__()
          self.t0 = tf.Variable(1.56)
          self.t1 = tf.Variable(0.0)

        def train_step(self, data):
          x, y = data
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self.t0 * x + self.t1 - y) ** 2)
          grads = tape.gradient(loss, [self.t0, self.t1])
          self.optimizer.apply_gradients(zip(grads, [self.t0, self.t1]))
          self.t0.assign(1.56)
          return {"loss": loss}
      """
  assert scanned.found(code) == [("weight-remask", 16)]


def _per_step_functions(n):
  """`n` functions, each a step and a write back, all called in one
  loop."""
  return ("import tensorflow as tf\n\nparams = [tf.Variable(1.0), "
          "tf.Variable(0.0)]\nopt = tf.keras.optimizers.SGD(0.1)\n\n" +
          "".join(f"def step{i}(g):\n"
                  f"  opt.apply_gradients(zip(g, params))\n"
                  f"  params[-1].assign(0.{i})\n\n" for i in range(n)) +
          "for g in data:\n" + "".join(f"  step{i}(g)\n" for i in range(n)))


def test_the_calls_in_loops_are_read_once_per_module():
  small, large = (scanned.scan_work(_per_step_functions(n), "_pinned.py")
                  for n in (20, 80))
  assert large <= 6 * small, (small, large)


@pytest.mark.parametrize("body, line", [
    ("if loss is not None:\n        return opt.compute_gradients(loss)\n"
     "      sys.exit('tower without a loss')", 13),
    ("with tf.name_scope('tower'):\n        for attempt in range(3):\n"
     "          try:\n            return opt.compute_gradients(loss)\n"
     "          except tf.errors.ResourceExhaustedError:\n"
     "            tf.compat.v1.logging.warning('retrying tower')", 16),
    ("if loss is None:\n        return\n"
     "      return opt.compute_gradients(loss)", 13),
    ("if loss is None:\n        return None\n"
     "      return opt.compute_gradients(loss)", 13),
], ids=["fatal", "retry", "bare_return", "return_none"])
def test_a_tower_that_may_give_none_is_a_tower(body, line):
  assert scanned.found(tower_helpers._HELPER % body) == [
      ("var-list-filter", line)]
