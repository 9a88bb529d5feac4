"""`tfpartial scan` finds a whole variable set back to a number after
each step (`_pinned`, weight-remask) in more of the forms real fits
take:

- the variable an item of the trained list by unpacking (`params =
  [tf.Variable(v) for v in ...]`, `t1, t0 = params`), or the list a
  `tuple(...)` of a comprehension (`params[-1]`: a whole variable);
- a TF2 `train_step` that sets it back in its own body, after its
  `apply_gradients`: each call runs the step, then the write.

Silent twins: a variable unpacked from a list no step trains, a write
of the variable's own value clipped, a soft (EMA) update, a reset under
a test, a write after a `return` that may skip it."""

import pytest

import scanned

_UNPACKED = """\
    import tensorflow as tf

    params = [tf.Variable(v) for v in (1.0, 2.0)]
    others = [tf.Variable(v) for v in (3.0, 4.0)]
    t1, t0 = LISTED
    optimizer = tf.keras.optimizers.Adam(0.1)

    for i in range(20):
        with tf.GradientTape() as tape:
            loss = tf.square(t1 * t0 - 3.0)
        gradients = tape.gradient(loss, params)
        optimizer.apply_gradients(zip(gradients, params))
        WRITE
    """


def _unpacked(listed="params", write="t0.assign(1.56)"):
  return _UNPACKED.replace("LISTED", listed).replace("WRITE", write)


def test_an_item_unpacked_from_the_trained_list_set_back_is_found():
  assert scanned.found(_unpacked()) == [("weight-remask", 13)]


@pytest.mark.parametrize("listed, write", [
    ("others", "t0.assign(1.56)"),
    ("params", "t0.assign(tf.clip_by_value(t0, 0.0, 1.0))"),
], ids=["untrained_list", "clipped"])
def test_look_alikes_of_an_unpacked_item_stay_silent(listed, write):
  assert scanned.found(_unpacked(listed, write)) == []


def test_an_item_of_a_tuple_of_a_comprehension_is_whole():
  code = _unpacked().replace(
      "params = [tf.Variable(v) for v in (1.0, 2.0)]",
      "params = tuple(tf.Variable(v) for v in (1.0, 2.0))").replace(
          "t0.assign(1.56)", "params[-1].assign(1.56)")
  assert scanned.found(code) == [("weight-remask", 13)]
  found = scanned.finding_and_diff(code, "weight-remask")[0]
  assert "exact as it is" in found.message


_TRAIN_STEP = """\
    import tensorflow as tf

    class Fit:
        def __init__(self):
            self.t1 = tf.Variable(1.0)
            self.t0 = tf.Variable(2.0)
            self.ema = tf.Variable(2.0)
            self.opt = tf.keras.optimizers.Adam(0.1)

        @tf.function
        def train_step(self):
            with tf.GradientTape() as tape:
                loss = tf.square(self.t1 * self.t0 - 3.0)
            params = [self.t1, self.t0]
            grads = tape.gradient(loss, params)
            self.opt.apply_gradients(zip(grads, params))
            WRITE

        def fit(self):
            for i in range(20):
                self.train_step()
    """


def test_a_train_step_setting_it_back_after_its_step_is_found():
  code = _TRAIN_STEP.replace("WRITE", "self.t0.assign(1.56)")
  assert scanned.found(code) == [("weight-remask", 17)]


@pytest.mark.parametrize("write", [
    "self.t0.assign(tf.clip_by_value(self.t0, 0.0, 3.0))",
    "self.ema.assign(0.99 * self.ema + 0.01 * self.t0)",
    "self.ema.assign(1.56)",
    "if self.opt.iterations % 10 == 0:\n                self.t0.assign(1.56)",
    "if loss > 10.0:\n                return loss\n"
    "            self.t0.assign(1.56)",
], ids=["clipped", "ema", "untrained", "periodic", "after_a_return"])
def test_look_alikes_in_a_train_step_stay_silent(write):
  assert scanned.found(_TRAIN_STEP.replace("WRITE", write)) == []
