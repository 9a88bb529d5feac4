"""`spec.mask(gradients, variables)`: aligned, exact zeros, clear errors.

The list it returns pairs with `variables` by position; a fully frozen
variable's entry is an exact zero of its gradient's form (clipping counts
it as 0, and every optimizer family takes it); mistakes that would
misalign are errors.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial


def _optimizers():
  """An optimizer of each family installed."""
  optimizers = [lambda: tf.compat.v1.train.AdamOptimizer(0.05)]
  import keras  # pylint: disable=g-import-not-at-top
  packages = [keras]
  if helpers.KERAS_3:
    try:
      import tf_keras  # pylint: disable=g-import-not-at-top
      packages.append(tf_keras)
    except ImportError:
      pass
  for package in packages:
    optimizers.append(lambda package=package: package.optimizers.AdamW(
        0.05, 0.1))
    if int(package.__version__.split(".")[0]) < 3:  # Keras 2 has legacy.
      optimizers.append(
          lambda package=package: package.optimizers.legacy.Adam(0.05))
  return optimizers


def _mask_problem():
  x = tf.Variable([1.0, 2.0, 3.0], name="x")
  table = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2),
                      name="table")
  b = tf.Variable([3.0], name="b")
  free = tf.Variable([4.0, 5.0], name="free")
  spec = (tfpartial.freeze(x, [0, 2]) | tfpartial.freeze(table)
          | tfpartial.freeze(b))
  return spec, [x, table, b, free]


def test_mask_gives_one_gradient_per_variable_in_order():
  spec, (x, table, b, free) = _mask_problem()
  rows = tf.IndexedSlices(tf.constant([[np.inf, 1.0], [np.nan, 2.0]]),
                          tf.constant([3, 1]), tf.constant([4, 2]))
  gradients = [tf.constant([np.nan, 6.0, np.inf]), rows, None,
               tf.constant([7.0, 8.0])]
  masked = spec.mask(gradients, [x, table, b, free])
  assert len(masked) == 4
  helpers.assert_same_bits(masked[0].numpy(), np.float32([0.0, 6.0, 0.0]),
                           "x: frozen elements 0, even from NaN and Inf")
  # Fully frozen: an exact zero of the gradient's form, still sparse.
  assert isinstance(masked[1], tf.IndexedSlices)
  helpers.assert_same_bits(masked[1].values.numpy(), np.zeros((2, 2),
                                                              np.float32))
  np.testing.assert_array_equal(masked[1].indices.numpy(), [3, 1])
  assert masked[2] is None  # None stays None.
  assert masked[3] is gradients[3]  # Not in the spec: as it was.
  # Clipping takes the list, and counts only what trains.
  clipped, norm = tf.clip_by_global_norm(masked, 1.0)
  assert float(norm) == pytest.approx(np.sqrt(36.0 + 49.0 + 64.0))
  assert isinstance(clipped[1], tf.IndexedSlices) and clipped[2] is None


def test_mask_fully_frozen_zero_is_taken_by_every_family():
  spec, variables = _mask_problem()
  x, table, b, free = variables
  optimizers = [make() for make in _optimizers()]
  for optimizer in optimizers:
    for variable, value in zip(variables, ([1.0, 2.0, 3.0], np.arange(
        8, dtype=np.float32).reshape(4, 2), [3.0], [4.0, 5.0])):
      variable.assign(value)
    before = [v.numpy() for v in variables]
    rows = tf.IndexedSlices(tf.ones([1, 2]), tf.constant([2]),
                            tf.constant([4, 2]))
    grads = spec.mask([tf.ones([3]), rows, tf.ones([1]), tf.ones([2])],
                      variables)
    spec.wrap(optimizer).apply_gradients(zip(grads, variables))
    helpers.assert_same_bits(x.numpy()[[0, 2]], before[0][[0, 2]],
                             type(optimizer).__name__)
    helpers.assert_same_bits(table.numpy(), before[1], "table")
    helpers.assert_same_bits(b.numpy(), before[2], "b")
    assert not np.array_equal(free.numpy(), before[3])


@pytest.mark.parametrize("gradients, error, message", [
    ([tf.constant([1.0, 2.0, 3.0])], ValueError,
     "`gradients` has 1 entries and `variables` 4"),
    ([tf.ones([2]), tf.ones([4, 2]), tf.ones([1]), tf.ones([2])], ValueError,
     "`gradients[0]` pairs a gradient of shape (2,) with variable 'x' of "
     "shape (3,)"),
    ("pairs", TypeError, "`gradients[0]` must be a gradient"),
    ([tf.ones([3]), tf.ones([4, 2]), "not a gradient", tf.ones([2])],
     TypeError, "`gradients[2]` must be a gradient"),
    ([tf.ones([3]), tf.ones([4, 2]), tf.ones([1]),
      tf.constant(["a", "b"])], TypeError,
     "`gradients[3]` must be a gradient"),
])
def test_mask_refuses_what_would_misalign(gradients, error, message):
  spec, variables = _mask_problem()
  if gradients == "pairs":  # mask_gradients' input given to mask.
    gradients = list(zip([tf.ones([3]), tf.ones([4, 2]), tf.ones([1]),
                          tf.ones([2])], variables))
  with pytest.raises(error) as raised:
    spec.mask(gradients, variables)
  assert message in str(raised.value)
