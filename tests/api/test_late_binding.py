"""`load_spec` without variables: the spec binds by name at its first step.

For code that makes its optimizer before its model (a canned Estimator, a
trainer built first): the file is checked when it is loaded, and bound by
checkpoint name to the variables of the first step, once per graph. The
frozen elements hold bit for bit and the others train as the same spec
bound up front trains them.
"""

import json

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

SPEC = json.dumps({"x": {"freeze": "0"}, "b": {"freeze": "..."}})
X0 = np.array([1.0, 2.0, 3.0], np.float32)
B0 = np.array([4.0], np.float32)


def _loss(x, b):
  return tf.reduce_sum(tf.square(x * 2.0 - 1.0)) + tf.reduce_sum(b * b)


def _train(runner, make_spec, make_optimizer, how, steps=3):
  """x and b after `steps` steps of `how` ("wrap", "apply_gradients",
  "minimize") with the spec `make_spec(x, b)` gives."""
  x = runner.variable(X0, "x")
  b = runner.variable(B0, "b")
  spec, optimizer = make_spec(x, b), make_optimizer()

  def step():
    if how == "minimize":
      return spec.minimize(optimizer, _loss(x, b) if runner.graph else
                           (lambda: _loss(x, b)), var_list=[x, b])
    grads = runner.gradients(lambda: _loss(x, b), [x, b])
    if how == "wrap":
      return spec.wrap(optimizer).apply_gradients(zip(grads, [x, b]))
    return spec.apply_gradients(optimizer, zip(grads, [x, b]))

  run = runner.step(step)
  for _ in range(steps):
    run()
  return runner.value(x), runner.value(b)


@pytest.mark.parametrize("how", ["wrap", "apply_gradients", "minimize"])
def test_a_spec_bound_at_its_first_step_trains_as_one_bound_up_front(
    exact_mode, how):
  optimizer = lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
  with exact_mode.runner() as runner:
    late = _train(runner, lambda x, b: tfpartial.load_spec(SPEC), optimizer,
                  how)
  with exact_mode.runner() as runner:
    bound = _train(runner, lambda x, b: tfpartial.load_spec(SPEC, [x, b]),
                   optimizer, how)
  helpers.assert_same_bits(late[0][0], X0[0], "frozen x[0]")
  helpers.assert_same_bits(late[1], B0, "frozen b")
  helpers.assert_same_bits(late[0], bound[0], "x against the bound spec")
  assert (late[0][1:] != X0[1:]).all()


@helpers.needs_keras_3
def test_a_keras_optimizer_wrapped_before_its_model_binds_in_fit():
  import keras  # pylint: disable=g-import-not-at-top
  spec = tfpartial.load_spec(json.dumps(
      {"net/dense/kernel": {"freeze": "0"},
       "net/dense/bias": {"freeze": "..."}}))
  optimizer = spec.wrap(keras.optimizers.Adam(0.1))  # Before the model.
  model = keras.Sequential([keras.Input((2,)),
                            keras.layers.Dense(3, name="dense")], name="net")
  kernel0 = model.layers[0].kernel.numpy()
  bias0 = model.layers[0].bias.numpy()
  model.compile(optimizer=optimizer, loss="mse")
  model.fit(np.ones((4, 2)), np.ones((4, 3)), epochs=2, verbose=0)
  kernel = model.layers[0].kernel.numpy()
  helpers.assert_same_bits(kernel[0], kernel0[0], "frozen kernel row")
  helpers.assert_same_bits(model.layers[0].bias.numpy(), bias0, "bias")
  assert (kernel[1] != kernel0[1]).all()
  assert tfpartial.spec_of(model).frozen_mask(
      model.layers[0].kernel).tolist() == [[True] * 3, [False] * 3]


def test_it_binds_again_in_every_new_graph():
  # As an Estimator's model_fn: one wrapped optimizer, a new graph (and new
  # variables of the same names) for every train.
  optimizer = tfpartial.load_spec(SPEC).wrap(
      tf.compat.v1.train.AdamOptimizer(0.1))
  for _ in range(2):
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
      x = tf.compat.v1.get_variable("x", initializer=X0)
      b = tf.compat.v1.get_variable("b", initializer=B0)
      train_op = optimizer.minimize(_loss(x, b))
      session.run(tf.compat.v1.global_variables_initializer())
      for _ in range(3):
        session.run(train_op)
      x_now, b_now = session.run([x, b])
      helpers.assert_same_bits(x_now[0], X0[0], "x[0]")
      helpers.assert_same_bits(b_now, B0, "b")
      assert (x_now[1:] != X0[1:]).all()


def test_a_name_that_matches_nothing_is_an_error_at_the_step():
  spec = tfpartial.load_spec(json.dumps({"dense/kernal": {"freeze": "0"}}))
  kernel = tf.Variable(tf.ones([2, 2]), name="dense/kernel")
  optimizer = spec.wrap(tf.keras.optimizers.SGD(0.1))
  with pytest.raises(ValueError, match=(
      r"^the spec names 'dense/kernal', which is not among the variables "
      r"this step trains \(dense/kernel\); the nearest names are "
      r"'dense/kernel'\. A spec loaded without variables binds by "
      r"checkpoint name when it first steps\.$")):
    optimizer.apply_gradients([(tf.ones([2, 2]), kernel)])
  helpers.assert_same_bits(kernel.numpy(), np.ones((2, 2), np.float32))


def test_a_bad_file_is_refused_when_it_is_loaded_not_at_the_step():
  with pytest.raises(ValueError, match="cannot parse index"):
    tfpartial.load_spec(json.dumps({"x": {"freeze": ":, a"}}))


def test_what_needs_the_variables_says_so_until_it_has_stepped():
  spec = tfpartial.load_spec(SPEC)
  assert repr(spec) == "FreezeSpec(binds by name at its first step: x, b)"
  assert len(spec) == 2 and spec == spec
  x = tf.Variable(X0, name="x")
  for ask in (lambda: spec.variables, lambda: spec.frozen_mask(x),
              lambda: spec.to_json(), lambda: spec | tfpartial.freeze(x),
              lambda: x in spec):
    with pytest.raises(ValueError, match=(
        r"needs the spec's variables, and this spec \(x, b\) was loaded "
        r"without them")):
      ask()


def test_mask_binds_to_the_variables_it_is_given():
  x, b = tf.Variable(X0, name="x"), tf.Variable(B0, name="b")
  masked = tfpartial.load_spec(SPEC).mask([tf.ones(3), tf.ones(1)], [x, b])
  assert [g.numpy().tolist() for g in masked] == [[0.0, 1.0, 1.0], [0.0]]


@helpers.needs_keras_3
def test_a_wrapped_optimizer_saved_before_its_first_step_keeps_the_spec():
  import keras  # pylint: disable=g-import-not-at-top
  optimizer = tfpartial.load_spec(SPEC).wrap(keras.optimizers.SGD(0.5))
  config = optimizer.get_config()
  assert json.loads(config["tfpartial"]["spec"]) == json.loads(SPEC)
  restored = type(optimizer).from_config(config)
  x, b = tf.Variable(X0, name="x"), tf.Variable(B0, name="b")
  restored.apply_gradients([(tf.ones(3), x), (tf.ones(1), b)])
  helpers.assert_same_bits(x.numpy(), np.array([1.0, 1.5, 2.5], np.float32))
  helpers.assert_same_bits(b.numpy(), B0)
