"""`load_spec` without variables: the spec binds by name as steps show them.

For code that makes its optimizer before its model (a canned Estimator, a
trainer built first): the file is checked when it is loaded, and bound by
checkpoint name to the variables of the first step, in each graph apart;
a variable a later step shows first is bound at that step; several
optimizers may share the spec, each binding what it trains. The frozen
elements hold bit for bit and the others train as the same spec bound up
front trains them.
"""

import gc
import json
import threading
import weakref

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


# --- Variables that first reach a later step ------------------------------
#
# The spec binds each variable at the first step that shows it, in every
# mode and through every entry point: `b/bias`, made after the first steps,
# matches `**/bias`, and its last element (computed from its own shape when
# it binds) stays bit for bit; it trained freely before.

GROWN = json.dumps({"a/kernel": {"freeze": "0"}, "**/bias": {"freeze": "-1"}})
A_KERNEL = np.array([1.0, 2.0, 3.0], np.float32)
A_BIAS = np.array([4.0], np.float32)
B_KERNEL = np.array([5.0, 6.0], np.float32)
B_BIAS = np.array([2.0, 1.0], np.float32)
ENTRY_POINTS = ["wrap", "apply_gradients", "minimize", "mask",
                "mask_gradients"]


def _grown_loss(variables):
  return tf.add_n([tf.reduce_sum(tf.square(v * 2.0 - 1.0))
                   for v in variables])


def _phase(runner, how, spec, optimizer, variables, steps=2):
  """`steps` steps of `how` on `variables`; for "wrap", `optimizer` is the
  wrapped one."""

  def step():
    loss = lambda: _grown_loss(variables)
    if how == "minimize":
      return spec.minimize(optimizer, runner.loss(loss), var_list=variables)
    grads = runner.gradients(loss, variables)
    if how == "mask":
      return optimizer.apply_gradients(
          zip(spec.mask(grads, variables), variables))
    if how == "mask_gradients":
      return optimizer.apply_gradients(
          spec.mask_gradients(zip(grads, variables)))
    if how == "wrap":
      return optimizer.apply_gradients(zip(grads, variables))
    return spec.apply_gradients(optimizer, zip(grads, variables))

  run = runner.step(step)
  for _ in range(steps):
    run()


def _grow(runner, how, late):
  """a/kernel and a/bias after two steps of `how`, then b/kernel and
  b/bias made and two steps of all four: the values of all four. `late`:
  one spec loaded without variables; else the spec bound up front to each
  phase's variables."""
  optimizer = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)
  late_spec = tfpartial.load_spec(GROWN)
  late_wrapped = late_spec.wrap(optimizer)
  variables = [runner.variable(A_KERNEL, "a/kernel"),
               runner.variable(A_BIAS, "a/bias")]
  for phase in range(2):
    if phase:  # Made after the first steps, as a layer built later is.
      variables += [runner.variable(B_KERNEL, "b/kernel"),
                    runner.variable(B_BIAS, "b/bias")]
    spec = late_spec if late else tfpartial.load_spec(GROWN, variables)
    stepper = optimizer
    if how == "wrap":
      stepper = late_wrapped if late else spec.wrap(optimizer)
    _phase(runner, how, spec, stepper, variables)
  return [runner.value(v) for v in variables]


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_variable_a_later_step_shows_first_is_bound_at_that_step(
    mode, how):
  with mode.runner() as runner:
    a_kernel, a_bias, b_kernel, b_bias = _grow(runner, how, late=True)
  helpers.assert_same_bits(b_bias[1], B_BIAS[1],
                           "b/bias[-1], made after the first steps")
  assert b_bias[0] != B_BIAS[0]
  helpers.assert_same_bits(a_bias, A_BIAS, "a/bias")
  helpers.assert_same_bits(a_kernel[0], A_KERNEL[0], "a/kernel[0]")
  assert (b_kernel != B_KERNEL).all() and (a_kernel[1:] != A_KERNEL[1:]).all()
  with mode.runner() as runner:
    bound = _grow(runner, how, late=False)
  for late, reference, name in zip((a_kernel, b_kernel), bound[::2],
                                   ("a/kernel", "b/kernel")):
    if mode is helpers.XLA:  # XLA fuses the step: round-off, not bits.
      np.testing.assert_allclose(late, reference, rtol=1e-6)
    else:
      helpers.assert_same_bits(late, reference, f"{name} against bound")


def test_an_entry_ranked_across_its_variables_refuses_a_later_one(tf2_mode):
  """Ranked alone, `b/kernel` would have its own top 2 frozen, where the
  entry's ranking across both (what verify computes) freezes other ones."""
  spec = tfpartial.load_spec('{"**/kernel": {"freeze": {"top_k": 2, '
                             '"by": "magnitude", "scope": "entry"}}}')
  optimizer = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.5))
  a_kernel = tf.Variable([1.0, 4.0, 3.0], name="a/kernel")
  with tf2_mode.runner() as runner:
    runner.step(lambda: optimizer.apply_gradients(
        [(tf.ones([3]), a_kernel)]))()
    helpers.assert_same_bits(a_kernel.numpy()[1:], np.float32([4.0, 3.0]))
    b_kernel = tf.Variable([9.0, 0.5], name="b/kernel")
    with pytest.raises(ValueError, match=r"entry '\*\*/kernel' ranks its "
                       r"criterion across every variable.*'b/kernel'"):
      runner.step(lambda: optimizer.apply_gradients(
          [(tf.ones([3]), a_kernel), (tf.ones([2]), b_kernel)]))()
    helpers.assert_same_bits(b_kernel.numpy(), np.float32([9.0, 0.5]))


def test_a_name_binds_each_variable_of_that_name_a_step_shows(tf2_mode):
  # Eagerly, names are not unique: a second model's `dense/kernel`.
  spec = tfpartial.load_spec('{"dense/kernel": {"freeze": "0"}}')
  optimizer = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.5))
  with tf2_mode.runner() as runner:
    for _ in range(2):
      kernel = tf.Variable([1.0, 1.0], name="dense/kernel")
      runner.step(lambda: optimizer.apply_gradients(
          [(tf.ones([2]), kernel)]))()  # pylint: disable=cell-var-from-loop
      helpers.assert_same_bits(kernel.numpy(),
                               np.array([1.0, 0.5], np.float32))


@pytest.mark.parametrize("jit_compile", [False, True], ids=["tf_function",
                                                            "xla"])
def test_variables_new_to_a_tf_function_bind_at_its_trace(jit_compile):
  spec = tfpartial.load_spec(GROWN)
  # No slots: a retrace may not make variables (TensorFlow's rule, plain
  # too), and Keras optimizers refuse variables they were not built on.
  optimizer = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.1))

  def apply(variables):
    with tf.GradientTape() as tape:
      loss = _grown_loss(variables)
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

  step = tf.function(lambda variables: apply(list(variables)),
                     jit_compile=jit_compile)
  a = [tf.Variable(A_KERNEL, name="a/kernel"),
       tf.Variable(A_BIAS, name="a/bias")]
  step(a)
  b = [tf.Variable(B_KERNEL, name="b/kernel"),
       tf.Variable(B_BIAS, name="b/bias")]
  step(a + b)  # A retrace, with new variables.
  assert step.experimental_get_tracing_count() == 2
  made = []

  @tf.function(jit_compile=jit_compile)
  def lazily():
    if not made:  # Made at the trace, as a layer first called in one is.
      made.append(tf.Variable(B_BIAS, name="c/bias"))
    apply(a + made)

  lazily()
  lazily()
  helpers.assert_same_bits(a[1].numpy(), A_BIAS, "a/bias")
  helpers.assert_same_bits(b[1].numpy()[1], B_BIAS[1], "b/bias, in the retrace")
  helpers.assert_same_bits(made[0].numpy()[1], B_BIAS[1], "c/bias, made lazily")
  assert b[1].numpy()[0] != B_BIAS[0] and made[0].numpy()[0] != B_BIAS[0]
  helpers.assert_same_bits(a[0].numpy()[0], A_KERNEL[0], "a/kernel[0]")
  assert (b[0].numpy() != B_KERNEL).all()


@pytest.mark.parametrize("function", [False, True], ids=["eager",
                                                        "tf_function"])
def test_a_step_over_seen_variables_matches_no_name(monkeypatch, function):
  # The bound path: a set check of the step's variables, no name matching
  # (counted where the matching starts: names, then patterns).
  from tfpartial._frozen import _patterns  # pylint: disable=g-import-not-at-top
  from tfpartial._frozen import _specfile  # pylint: disable=g-import-not-at-top
  named, expanded = [], []
  by_name, expand = _specfile.variables_by_name, _patterns.expand
  monkeypatch.setattr(_specfile, "variables_by_name", lambda variables: (
      named.append(len(variables)), by_name(variables))[1])
  monkeypatch.setattr(_patterns, "expand", lambda *args: (
      expanded.append(1), expand(*args))[1])
  spec = tfpartial.load_spec(GROWN)
  optimizer = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.1))
  variables = [tf.Variable(A_KERNEL, name="a/kernel"),
               tf.Variable(A_BIAS, name="a/bias")]

  def step(variables):
    optimizer.apply_gradients([(tf.ones_like(v), v) for v in variables])

  if function:
    step = tf.function(step)
  counts = []
  for phase in range(2):
    if phase:
      variables = variables + [tf.Variable(B_BIAS, name="b/bias")]
    for _ in range(3):
      step(variables)
      counts.append((list(named), len(expanded)))
  # Only the new variables of a step are matched: 2 at the first, 1 later.
  assert [c[0] for c in counts] == [[2]] * 3 + [[2, 1]] * 3
  assert counts[0][1] == counts[2][1] and counts[3][1] == counts[5][1]
  assert counts[3][1] > counts[2][1]
  helpers.assert_same_bits(variables[2].numpy()[1], B_BIAS[1], "b/bias[-1]")


def test_threads_showing_new_variables_at_once_each_get_theirs_masked():
  spec = tfpartial.load_spec(GROWN)
  spec.mask([tf.ones([3]), tf.ones([1])],
            [tf.Variable(A_KERNEL, name="a/kernel"),
             tf.Variable(A_BIAS, name="a/bias")])
  biases = [tf.Variable(A_BIAS, name=f"t{i}/bias") for i in range(8)]
  barrier = threading.Barrier(len(biases))
  masked = [None] * len(biases)

  def run(i):
    barrier.wait()
    masked[i] = spec.mask([tf.ones([1])], [biases[i]])[0].numpy()

  threads = [threading.Thread(target=run, args=(i,))
             for i in range(len(biases))]
  for thread in threads:
    thread.start()
  for thread in threads:
    thread.join(60)
  assert [m.tolist() for m in masked] == [[0.0]] * len(biases)


def test_what_a_late_spec_has_seen_it_does_not_keep_alive():
  # Ids are checked against weak references: an optimizer done with, and
  # a variable no entry matched, are freed (a bound one the spec holds).
  spec = tfpartial.load_spec(GROWN)
  optimizer = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.1))
  variables = [tf.Variable(A_KERNEL, name="a/kernel"),
               tf.Variable(A_BIAS, name="a/bias"),
               tf.Variable(B_KERNEL, name="other")]
  optimizer.apply_gradients([(tf.ones_like(v), v) for v in variables])
  freed = [weakref.ref(optimizer), weakref.ref(variables[2])]
  del optimizer, variables[2]
  gc.collect()
  assert [reference() for reference in freed] == [None, None]
  again = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.1))
  again.apply_gradients([(tf.ones_like(v), v) for v in variables])
  helpers.assert_same_bits(variables[1].numpy(), A_BIAS, "a/bias")


# --- Several optimizers, one spec -----------------------------------------
#
# A wide & deep model's two optimizers, each wrapped with one spec loaded
# without variables: each binds the variables it trains.

SHARED = json.dumps({"dnn/emb": {"freeze": ":2"},
                     "linear/weight": {"freeze": "0"}})
EMB = np.arange(8, dtype=np.float32).reshape(4, 2) / 4.0
WEIGHT = np.array([0.5, -0.5, 1.5], np.float32)


def _wide_and_deep(runner, spec_text, steps=2):
  """Momentum trains dnn/emb, Ftrl linear/weight, each wrapped with one
  spec: the values of both after `steps` steps of both."""
  spec = tfpartial.load_spec(spec_text)
  dnn = spec.wrap(tf.compat.v1.train.MomentumOptimizer(0.1, 0.9))
  linear = spec.wrap(tf.compat.v1.train.FtrlOptimizer(
      0.1, l2_shrinkage_regularization_strength=0.1))
  emb = runner.variable(EMB, "dnn/emb")
  weight = runner.variable(WEIGHT, "linear/weight")
  loss = lambda: (tf.reduce_sum(tf.square(emb - 3.0))
                  + tf.reduce_sum(tf.square(weight + 1.0)))

  def step():
    grads = runner.gradients(loss, [emb, weight])
    return tf.group(dnn.apply_gradients([(grads[0], emb)]),
                    linear.apply_gradients([(grads[1], weight)]))

  run = runner.step(step)
  for _ in range(steps):
    run()
  return runner.value(emb), runner.value(weight)


def test_optimizers_sharing_a_spec_each_bind_what_they_train(exact_mode):
  with exact_mode.runner() as runner:
    emb, weight = _wide_and_deep(runner, SHARED)
  helpers.assert_same_bits(emb[:2], EMB[:2], "dnn/emb rows 0-1")
  helpers.assert_same_bits(weight[0], WEIGHT[0], "linear/weight[0]")
  assert (emb[2:] != EMB[2:]).all() and (weight[1:] != WEIGHT[1:]).all()


def test_a_name_no_sharing_optimizer_trains_is_an_error_at_the_last_first_step(
    graph_mode):
  typo = json.dumps({"dnn/emb": {"freeze": ":2"},
                     "linear/wieght": {"freeze": "0"}})
  # In a graph, the first optimizer's step is built before the error.
  with graph_mode.runner() as runner, pytest.raises(ValueError, match=(
      r"^the spec names 'linear/wieght', which is not among the variables "
      r"the 2 optimizers sharing the spec train \(dnn/emb, linear/weight\); "
      r"the nearest names are 'linear/weight'\.")):
    _wide_and_deep(runner, typo)


def test_a_sharing_optimizer_dropped_unstepped_holds_the_error_back_no_more():
  spec = tfpartial.load_spec('{"x": {"freeze": "0"}, "y": {"freeze": "0"}}')
  x = tf.Variable([1.0, 1.0], name="x")
  waiting = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.5))
  stepping = spec.wrap(tf.compat.v1.train.GradientDescentOptimizer(0.5))
  stepping.apply_gradients([(tf.ones([2]), x)])  # y: for `waiting` to bind.
  helpers.assert_same_bits(x.numpy(), np.array([1.0, 0.5], np.float32))
  waiting.cycle = waiting  # Garbage only the cycle collector finds.
  del waiting
  stepping.apply_gradients([(tf.ones([2]), x)])  # Not collected: waits.
  gc.collect()
  # While `y` waits, each step asks again: this one finds no one to wait for.
  with pytest.raises(ValueError, match=(
      r"^the spec names 'y', which is not among the variables this step "
      r"trains \(x\)")):
    stepping.apply_gradients([(tf.ones([2]), x)])
  helpers.assert_same_bits(x.numpy(), np.array([1.0, 0.0], np.float32))


def _keras_2():
  """tf_keras, or `keras` itself where it is Keras 2 (TensorFlow 2.15)."""
  if helpers.KERAS_3:
    return pytest.importorskip("tf_keras",
                               reason="the tf_keras package is not installed")
  import keras  # pylint: disable=g-import-not-at-top
  return keras


def test_a_keras_2_layer_added_after_the_first_fit_is_bound_in_the_next():
  # A legacy Keras 2 optimizer takes variables it has not seen; Keras 3
  # optimizers refuse them (they bind all they are built on instead).
  keras_2 = _keras_2()
  spec = tfpartial.load_spec(GROWN)
  optimizer = spec.wrap(keras_2.optimizers.legacy.SGD(0.1, momentum=0.9))
  model = keras_2.Sequential([
      keras_2.Input((3,)),
      keras_2.layers.Dense(1, name="a", bias_initializer="ones")])
  kernel = model.layers[0].kernel
  kernel.assign(A_KERNEL[:, None])
  x, y = np.ones((4, 3), np.float32), np.full((4, 1), 3.0, np.float32)
  model.compile(optimizer, "mse")
  model.fit(x, y, epochs=2, verbose=0)
  model.add(keras_2.layers.Dense(1, name="b", bias_initializer="ones"))
  model.compile(optimizer, "mse")
  model.fit(x, y, epochs=2, verbose=0)
  for layer in model.layers:
    helpers.assert_same_bits(layer.bias.numpy(), np.ones(1, np.float32),
                             layer.bias.name)
  helpers.assert_same_bits(kernel.numpy()[0], A_KERNEL[:1], "a/kernel[0]")
  assert (kernel.numpy()[1:, 0] != A_KERNEL[1:]).all()


@helpers.needs_keras_3
@pytest.mark.parametrize("how", ["eager", "tf_function", "xla", "fit"])
def test_two_keras_optimizers_sharing_a_spec_each_bind_theirs(how):
  import keras  # pylint: disable=g-import-not-at-top
  gen = keras.layers.Dense(2, name="gen", bias_initializer="ones")
  disc = keras.layers.Dense(1, name="disc", bias_initializer="ones")
  gen.build((None, 2))
  disc.build((None, 2))
  kernels = [gen.kernel.numpy(), disc.kernel.numpy()]
  spec = tfpartial.load_spec(json.dumps({
      gen.kernel.path: {"freeze": "0"}, disc.kernel.path: {"freeze": "0"},
      "**/bias": {"freeze": "..."}}))
  optimizers = [spec.wrap(keras.optimizers.Adam(0.1)) for _ in range(2)]
  x = tf.ones((4, 2))

  def step():
    with tf.GradientTape(persistent=True) as tape:
      loss = tf.reduce_mean(tf.square(disc(gen(x)) - 3.0))
    for optimizer, layer in zip(optimizers, (gen, disc)):
      variables = layer.trainable_variables
      optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

  if how == "fit":

    class Pair(keras.Model):

      def call(self, inputs):
        return disc(gen(inputs))

      def train_step(self, data):
        del data
        step()
        return {"steps": tf.constant(1)}

    model = Pair()
    model.compile()
    model.fit(np.ones((4, 2), np.float32), epochs=2, verbose=0)
  else:
    run = step if how == "eager" else tf.function(
        step, jit_compile=how == "xla")
    for _ in range(2):
      run()
  for layer, kernel in zip((gen, disc), kernels):
    helpers.assert_same_bits(layer.kernel.numpy()[0], kernel[0],
                             f"{layer.name} kernel row 0")
    helpers.assert_same_bits(layer.bias.numpy(),
                             np.ones(layer.bias.shape, np.float32),
                             f"{layer.name} bias")
    assert (layer.kernel.numpy()[1] != kernel[1]).all()
