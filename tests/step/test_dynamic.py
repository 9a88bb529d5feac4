"""Masks that change during training, held in a bool variable.

Gradual unfreezing and re-selected sparse fine-tuning masks: assigning the
mask variable between steps changes what is frozen, without retracing a
tf.function and without rebuilding a TF1 graph.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from problems import X0

PHASE_1 = np.zeros((3, 4), bool)
PHASE_1[:2] = True                  # Rows 0 and 1 frozen,
PHASE_2 = np.zeros((3, 4), bool)
PHASE_2[0] = True                   # then row 1 thaws.


def _loss(x):
  return tf.reduce_sum(tf.square(x - 1.0))


@pytest.mark.parametrize("kind", ["freeze", "train_only"])
def test_mask_variable_changes_the_freeze_without_retracing(mode, kind):
  with mode.runner() as runner:
    x = runner.variable(X0, "x")
    as_stored = (lambda m: m) if kind == "freeze" else (lambda m: ~m)
    mask = runner.variable(as_stored(PHASE_1), "mask", dtype=tf.bool,
                           trainable=False)
    build = tfpartial.freeze if kind == "freeze" else tfpartial.train_only
    spec = build(x, mask)
    optimizer = tf.compat.v1.train.FtrlOptimizer(
        0.1, l1_regularization_strength=0.05)
    traces = []

    def step():
      traces.append(1)  # Runs when traced (or, eagerly, at every call).
      grads = runner.gradients(lambda: _loss(x), [x])
      return spec.apply_gradients(optimizer, zip(grads, [x]))

    run = runner.step(step)
    traced = []
    for phase in (PHASE_1, PHASE_2):
      runner.assign(mask, as_stored(phase))
      start = runner.value(x)
      for _ in range(2):
        run()
        helpers.assert_same_bits(runner.value(x)[phase], start[phase],
                                 f"frozen in {phase.sum()}-element phase")
      assert (runner.value(x)[~phase] != start[~phase]).all()
      traced.append(len(traces))
    if runner.graph or mode.function is not None:
      # The first call may trace twice (the optimizer creates its slots);
      # the new mask must add no trace.
      assert traced[1] == traced[0], f"traces per phase: {traced}"


def test_mask_variable_with_a_static_part_and_rows():
  x = tf.Variable(X0, name="x")
  mask = tf.Variable(PHASE_2, name="mask", trainable=False)
  spec = tfpartial.freeze(x, mask) | tfpartial.freeze(x, (2, 3))
  expected = PHASE_2.copy()
  expected[2, 3] = True
  np.testing.assert_array_equal(spec.frozen_mask(x), expected)
  assert "mask variable" in repr(spec) and "1 more frozen" in repr(spec)
  mask.assign(PHASE_1)
  expected[1] = True
  np.testing.assert_array_equal(spec.frozen_mask(x), expected)
  assert tfpartial.load_spec(spec.to_json(), [x]).frozen_mask(x).sum() == 9


def test_bad_mask_variables_are_clear_errors():
  x = tf.Variable(X0, name="x")
  with pytest.raises(TypeError, match=r"`index` is the variable 'm' of dtype float32; a mask variable for variable 'x' of shape \(3, 4\) must be bool"):
    tfpartial.freeze(x, tf.Variable(np.zeros((3, 4), np.float32), name="m"))
  with pytest.raises(ValueError, match=r"mask variable 'm' of shape \(3,\), which does not fit variable 'x' of shape \(3, 4\)"):
    tfpartial.freeze(x, tf.Variable(np.zeros(3, bool), name="m"))


def test_gradual_unfreezing_in_model_fit():
  """A Keras callback thaws the kernel row by row; fit traces once."""
  layer = keras.layers.Dense(2, name="d")
  model = keras.Sequential([keras.Input((4,)), layer])
  if helpers.KERAS_3:
    frozen_rows = keras.Variable(np.ones((4, 2), bool), trainable=False,
                                 dtype="bool", name="frozen_rows")
  else:
    frozen_rows = tf.Variable(np.ones((4, 2), bool), trainable=False,
                              name="frozen_rows")
  spec = tfpartial.freeze(layer.kernel, frozen_rows)
  model.compile(optimizer=spec.wrap(keras.optimizers.AdamW(0.1)), loss="mse")
  history = []

  def thaw(epoch, logs):
    rows = np.ones((4, 2), bool)
    rows[:epoch] = False
    frozen_rows.assign(rows)
    history.append((rows, layer.kernel.numpy()))

  model.fit(np.ones((8, 4)), np.ones((8, 2)), epochs=4, verbose=0,
            callbacks=[keras.callbacks.LambdaCallback(on_epoch_begin=thaw)])
  history.append((None, layer.kernel.numpy()))
  for (rows, start), (_, end) in zip(history, history[1:]):
    helpers.assert_same_bits(end[rows], start[rows], "rows still frozen")
    assert (end[~rows] != start[~rows]).all()
