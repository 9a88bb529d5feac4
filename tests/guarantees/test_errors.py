"""Guarantee 7: bad input is a clear error, raised before anything changes.

Messages name the argument, the variable, its shape and what was wrong.
"""

import re

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

X = re.escape("variable 'x' of shape (3, 4)")


@pytest.fixture
def x():
  return tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4), name="x")


@pytest.mark.parametrize("index, error, message", [
    (3, IndexError, r"`index` 3 is out of range for " + X + ".*index 3 is out of bounds for axis 0 with size 3"),
    (-4, IndexError, r"out of range for " + X),
    ((0, 4), IndexError, r"out of range for " + X),
    ((0, 1, 2), IndexError, r"`index` \(0, 1, 2\) has too many indices for " + X + r": it indexes 3 axes and the variable has 2\.$"),
    ((0, ..., ...), IndexError, r"`index` \(0, Ellipsis, Ellipsis\) for " + X + r" has 2 Ellipsis \('...'\); an index holds at most one\.$"),
    (np.s_[1, :, :], IndexError, r"has too many indices for " + X),
    (tf.constant(1.0), TypeError, r"holds the float32 1.0"),
    ([0, 5], IndexError, r"out of range for " + X),
    (np.ones((2, 4), bool), ValueError, r"`index` is a boolean mask that does not fit " + X),
    (np.ones((3, 5), bool), ValueError, r"boolean mask that does not fit " + X),
    (1.0, TypeError, r"`index` 1.0 for " + X + r" holds the float 1.0"),
    (np.float32(2), TypeError, r"holds the float32"),
    ((0, 1.5), TypeError, r"`index` \(0, 1.5\) for " + X + " holds the float"),
    (np.s_[0.5:2], TypeError, r"slice bound 0.5 of type float"),
    (np.s_[::0], ValueError, r"slice step of 0"),
    ("0", TypeError, r"`index` '0' for " + X + " is a string"),
    (np.eye(3, 4), TypeError, r"array of dtype float64; index arrays must hold integers or booleans"),
    ([[0, "a"]], TypeError, r"array of dtype <U"),
    ({0: 1}, TypeError, r"component of type dict"),
])
@pytest.mark.parametrize("build", [tfpartial.freeze, tfpartial.train_only],
                         ids=["freeze", "train_only"])
def test_bad_index_names_variable_shape_and_problem(x, build, index, error,
                                                    message):
  with pytest.raises(error, match=message):
    build(x, index)


@pytest.mark.parametrize("not_a_variable, shown", [
    (tf.constant([1.0, 2.0]), r"got EagerTensor of shape \(2,\)"),
    (np.zeros((2, 3)), r"got ndarray of shape \(2, 3\)"),
    ([1.0, 2.0], r"got list"),
    (None, r"got NoneType"),
])
def test_not_a_variable_is_a_type_error(not_a_variable, shown):
  with pytest.raises(TypeError, match=r"`variable` must be a tf.Variable .*" + shown):
    tfpartial.freeze(not_a_variable, 0)
  with pytest.raises(TypeError, match=r"`variable` must be a tf.Variable"):
    tfpartial.train_only(not_a_variable, 0)
  with pytest.raises(TypeError, match=r"`variable` must be a tf.Variable"):
    tfpartial.FreezeSpec().frozen_mask(not_a_variable)


def test_symbolic_index_is_a_type_error():
  with tf.Graph().as_default():
    x = tf.compat.v1.Variable(np.zeros((3, 4), np.float32), name="x")
    index = tf.constant(1, name="i")
    with pytest.raises(TypeError, match=r"symbolic tensor 'i:0'.*pass a NumPy value"):
      tfpartial.freeze(x, index)


@pytest.mark.parametrize("tensor, same", [
    (tf.constant(1), 1), (tf.constant(-1, tf.int64), -1),
    (tf.constant(True), True), (np.array(2), 2), (np.array(False), False),
    ((tf.constant(0), tf.constant([1, 3])), (0, [1, 3])),
], ids=repr)
def test_a_0d_index_is_taken_as_numpy_takes_it(x, tensor, same):
  np.testing.assert_array_equal(tfpartial.freeze(x, tensor).frozen_mask(x),
                                tfpartial.freeze(x, same).frozen_mask(x))
  assert tfpartial.freeze(x, tensor) == tfpartial.freeze(x, same)


def test_index_messages_end_with_one_period(x):
  for index in (3, np.ones((2, 4), bool), 1.0, np.s_[::0], "0", {0: 1},
                (0, 1, 2), np.eye(3, 4)):
    with pytest.raises((TypeError, ValueError, IndexError)) as error:
      tfpartial.freeze(x, index)
    message = str(error.value)
    assert message.endswith(".") and not message.endswith(".."), message


def test_eager_tensor_index_is_its_value(x):
  np.testing.assert_array_equal(
      tfpartial.freeze(x, tf.constant([0, 2])).frozen_mask(x),
      tfpartial.freeze(x, [0, 2]).frozen_mask(x))


def test_unknown_shape_is_a_value_error():
  with tf.Graph().as_default():
    unknown = tf.compat.v1.Variable(
        tf.compat.v1.placeholder_with_default(np.zeros(3, np.float32), [None]),
        validate_shape=False, name="u")
    with pytest.raises(ValueError, match=r"variable 'u' of shape \(None,\) is not fully known"):
      tfpartial.freeze(unknown, 0)


def _unchanged(x, optimizer, before):
  helpers.assert_same_bits(x.numpy(), before, "x after a rejected call")
  assert not optimizer.variables(), "the optimizer built state"


def test_not_an_optimizer_is_a_type_error(x):
  spec = tfpartial.freeze(x, 0)
  for thing in (object(), tf.keras.losses.MeanSquaredError(), "adam"):
    with pytest.raises(TypeError, match=r"`optimizer` must be an optimizer \(tf.compat.v1.train.Optimizer"):
      spec.apply_gradients(thing, [(tf.ones_like(x), x)])
    with pytest.raises(TypeError, match=r"`optimizer` must be an optimizer"):
      spec.wrap(thing)
    with pytest.raises(TypeError, match=r"`optimizer` must be an optimizer"):
      spec.minimize(thing, lambda: tf.reduce_sum(x), var_list=[x])


@pytest.mark.parametrize("pairs, error, message", [
    (lambda x, y: {"x": 1}, TypeError, r"`grads_and_vars` must be \(gradient, variable\) pairs.*got a dict"),
    (lambda x, y: 5, TypeError, r"iterable of \(gradient, variable\) pairs; got int"),
    (lambda x, y: [(tf.ones_like(x), x), tf.ones([3])], TypeError, r"`grads_and_vars\[1\]` must be a \(gradient, variable\) pair"),
    (lambda x, y: [(tf.ones_like(x), x), (tf.ones([2]), tf.ones([2]))], TypeError, r"`grads_and_vars\[1\]\[1\]` must be a tf.Variable.*got EagerTensor"),
    (lambda x, y: [(tf.ones_like(y), y), (tf.ones([4, 3]), x)], ValueError, r"`grads_and_vars\[1\]` pairs a gradient of shape \(4, 3\) with " + X),
    (lambda x, y: [(tf.ones_like(y), y)], ValueError, r"the spec names " + X + r", which is not among the variables being trained \(y\); was the spec built for another model or graph"),
    (lambda x, y: [(tf.ones_like(y), y), (tf.ones_like(x), x)], None, None),
])
def test_bad_pairs_change_nothing(x, pairs, error, message):
  y = tf.Variable([1.0, 2.0], name="y")
  spec = tfpartial.freeze(x, 0) | tfpartial.freeze(x, (2, 3))
  optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
  before = x.numpy()
  if error is None:  # The control: the same call with good pairs trains.
    spec.apply_gradients(optimizer, pairs(x, y))
    assert optimizer.variables() and not np.array_equal(x.numpy(), before)
    return
  with pytest.raises(error, match=message):
    spec.apply_gradients(optimizer, pairs(x, y))
  _unchanged(x, optimizer, before)


def test_everything_frozen_is_a_value_error(x):
  b = tf.Variable([1.0], name="b")
  spec = tfpartial.freeze(x) | tfpartial.freeze(b)
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
  with pytest.raises(ValueError, match=r"every variable in `grads_and_vars` is fully frozen by the spec \(x, b\)"):
    spec.apply_gradients(optimizer, [(tf.ones_like(x), x), (tf.ones_like(b), b)])
  with pytest.raises(ValueError, match=r"every variable in `var_list` is fully frozen by the spec \(x, b\)"):
    spec.minimize(optimizer, lambda: tf.reduce_sum(x) + b[0], var_list=[x, b])


def test_spec_from_another_graph_is_a_value_error():
  with tf.Graph().as_default():
    old = tf.compat.v1.Variable([1.0, 2.0], name="w")
    spec = tfpartial.freeze(old, 0)
  with tf.Graph().as_default():
    new = tf.compat.v1.Variable([1.0, 2.0], name="w")
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match=r"the spec names variable 'w' of shape \(2,\), which is not among the variables being trained \(w\); was the spec built for another model or graph, or is the variable not trainable\? To train with nothing frozen, use the optimizer without the spec\.$"):
      spec.minimize(optimizer, tf.reduce_sum(new))
    assert not optimizer.variables()


def test_unknown_minimize_argument_is_a_type_error(x):
  with pytest.raises(TypeError, match=r"unexpected keyword arguments \['learning_rate'\]"):
    tfpartial.freeze(x, 0).minimize(
        tf.compat.v1.train.GradientDescentOptimizer(0.1),
        lambda: tf.reduce_sum(x), var_list=[x], learning_rate=0.1)


@pytest.mark.parametrize("how", ["apply_gradients", "wrap"])
def test_pairs_misaligned_by_mask_gradients_name_the_dropped_variable(how):
  # mask_gradients drops a fully frozen variable's pair, as documented; a
  # caller who zips its gradients with every variable is told why the
  # shapes no longer match, and what keeps them aligned.
  x = tf.Variable([1.0, 2.0], name="x")
  b = tf.Variable([3.0], name="b")
  y = tf.Variable([[1.0, 2.0]], name="y")
  variables = [x, b, y]
  spec = tfpartial.freeze(x, 0) | tfpartial.freeze(b)
  grads = [tf.ones_like(v) for v in variables]
  masked = [g for g, _ in spec.mask_gradients(zip(grads, variables))]
  optimizer = tf.keras.optimizers.SGD(0.1)
  apply = (spec.wrap(optimizer).apply_gradients if how == "wrap" else
           lambda pairs: spec.apply_gradients(optimizer, pairs))
  before = [v.numpy() for v in variables]
  with pytest.raises(ValueError, match=(
      r"^`grads_and_vars\[1\]` pairs a gradient of shape \(1, 2\) with "
      r"variable 'b' of shape \(1,\)\. The spec freezes 'b' entirely, and "
      r"`spec\.mask_gradients` leaves such variables' pairs out, so its "
      r"gradients do not line up with a list of every variable: "
      r"`spec\.mask\(gradients, variables\)` keeps one gradient per "
      r"variable, in order\.$")):
    apply(list(zip(masked, variables)))
  for variable, value in zip(variables, before):
    helpers.assert_same_bits(variable.numpy(), value, variable.name)


def test_a_shape_mismatch_without_fully_frozen_variables_has_no_hint(x):
  y = tf.Variable([1.0], name="y")
  with pytest.raises(ValueError, match=r"with variable 'y' of shape \(1,\)\.$"):
    tfpartial.freeze(x, 0).apply_gradients(
        tf.keras.optimizers.SGD(0.1), [(tf.ones_like(x), x),
                                       (tf.ones([2]), y)])
