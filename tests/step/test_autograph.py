"""Autograph leaves tfpartial's step as written inside a user's tf.function.

A user's `tf.function` converts what it calls, and everything that calls,
unless a function is marked `tf.autograph.experimental.do_not_convert`.
tfpartial's step holds no Python control flow on tensors, so conversion
only adds to the trace (most of a large model's first step). A converted
function runs as `tf__<name>`, from code autograph generated: these tests
look at the Python stack where the step masks a gradient, not at a clock.
"""

import traceback

import numpy as np
import pytest
import tensorflow as tf

import tfpartial
from tfpartial._step import _mask

import helpers


def _converted_frames(monkeypatch):
  """Frames of autograph-converted functions seen by each mask, a list per
  call of `_mask.mask_gradient`. The compiled kernels, which mask inside
  their update, are off, and so are the select updates: every step here
  masks in Python with `_mask.mask_gradient`."""
  helpers.unfused(monkeypatch)
  seen = []
  original = _mask.mask_gradient

  @tf.autograph.experimental.do_not_convert
  def recording(grad, selection):
    seen.append([frame.name for frame in traceback.extract_stack()
                 if frame.name.startswith("tf__")])
    return original(grad, selection)

  monkeypatch.setattr(_mask, "mask_gradient", recording)
  return seen


def _problem():
  variable = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
  spec = tfpartial.freeze(variable, 0)
  return variable, spec


def _loss(variable):
  return tf.reduce_sum(tf.square(variable))


def _traced_step(body):
  """`body()` run once in a converting tf.function; the traced function
  itself is converted, so a `tf__` frame of it is the user's."""
  function = tf.function(body, autograph=True)
  function()


def _tfpartial_frames(seen):
  assert seen, "the step never masked a gradient"
  # The user's step (`tf__step`) is converted as it should be; nothing of
  # tfpartial's may be.
  return [[name for name in frames if name != "tf__step"]
          for frames in seen]


@pytest.mark.parametrize("entry", ["apply_gradients", "minimize",
                                   "mask_gradients", "mask"])
def test_spec_entry_points_are_not_converted(monkeypatch, entry):
  seen = _converted_frames(monkeypatch)
  variable, spec = _problem()
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)

  def step():
    if entry == "minimize":
      spec.minimize(optimizer, lambda: _loss(variable))
      return
    with tf.GradientTape() as tape:
      loss = _loss(variable)
    grads = tape.gradient(loss, [variable])
    if entry == "apply_gradients":
      spec.apply_gradients(optimizer, zip(grads, [variable]))
    elif entry == "mask_gradients":
      spec.mask_gradients(list(zip(grads, [variable])))
    else:
      spec.mask(grads, [variable])

  _traced_step(step)
  assert _tfpartial_frames(seen) == [[]] * len(seen)


def _keras2():
  """The Keras 2 package here: `tf_keras`, or `keras` on TensorFlow 2.15."""
  if helpers.KERAS_3:
    return pytest.importorskip(
        "tf_keras", reason="the tf_keras package is not installed")
  import keras  # pylint: disable=import-outside-toplevel
  return keras


@pytest.mark.parametrize("family", ["v1", "keras", "tf_keras",
                                    "tf_keras_legacy"])
def test_wrapped_optimizers_are_not_converted(monkeypatch, family):
  if family == "keras":
    if not helpers.KERAS_3:
      pytest.skip("Keras 2 here: Keras 3's optimizers are not installed")
    import keras  # pylint: disable=import-outside-toplevel
    make = lambda: keras.optimizers.SGD(0.1, momentum=0.9)
  elif family.startswith("tf_keras"):
    optimizers = _keras2().optimizers
    if family.endswith("legacy"):
      optimizers = optimizers.legacy
    make = lambda: optimizers.SGD(0.1, momentum=0.9)
  else:
    make = lambda: tf.compat.v1.train.MomentumOptimizer(0.1, momentum=0.9)
  seen = _converted_frames(monkeypatch)
  variable, spec = _problem()
  optimizer = spec.wrap(make())

  def step():
    with tf.GradientTape() as tape:
      loss = _loss(variable)
    grads = tape.gradient(loss, [variable])
    optimizer.apply_gradients(zip(grads, [variable]))

  _traced_step(step)
  assert _tfpartial_frames(seen) == [[]] * len(seen)


def test_the_probe_sees_a_converted_caller(monkeypatch):
  """The probe is able to fail: a converted tfpartial-like caller shows."""
  seen = _converted_frames(monkeypatch)
  variable, spec = _problem()
  selection = spec._value.selection(variable)  # pylint: disable=protected-access

  def masker(grad):
    return _mask.mask_gradient(grad, selection)

  def step():
    with tf.GradientTape() as tape:
      loss = _loss(variable)
    masker(tape.gradient(loss, variable))

  _traced_step(step)
  assert _tfpartial_frames(seen) == [["tf__masker"]]
