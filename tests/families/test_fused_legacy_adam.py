"""v1 Adam's kernel serves Keras 2's legacy Adam (`_fused_tf_keras`):
`tf.keras.optimizers.legacy.Adam` on TensorFlow 2.15 (what canned
Estimators take), `tf_keras.optimizers.legacy.Adam` later. Its dense update
is TensorFlow's `ResourceApplyAdam`, the kernel's model: a step leaves the
same bits as the unfused step (`TFPARTIAL_KERNELS=off`) in TF2 code, in a
TF1 graph and in a canned Estimator, NaN and Inf where frozen; where it
cannot serve, the step stays unfused."""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial._kernels import _native
from test_tf_keras import K, L, STEPS, _Model, _train

pytestmark = pytest.mark.usefixtures("compiled_kernel")
KERNEL = "TfpartialResourceApplyAdam"

OPTIMIZERS = {
    "Adam": lambda: L.Adam(0.05),
    "Adam_schedule": lambda: L.Adam(
        K.schedules.ExponentialDecay(0.05, 1, 0.5), beta_1=0.8,
        epsilon=1e-3),
}


def _run(name, mode, kernels, monkeypatch):
  monkeypatch.setenv(_native.SWITCH, kernels)
  model, optimizer = _Model(), OPTIMIZERS[name]()
  trajectory = _train(model, optimizer, model.spec(), mode)
  return trajectory, [np.array(v.numpy()) for v in optimizer.variables()]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("mode", helpers.KERAS_LOOP_AND_FIT, ids=str)
def test_the_kernel_leaves_the_bits_the_unfused_step_leaves(
    name, mode, monkeypatch):
  fused, fused_slots = _run(name, mode, "on", monkeypatch)
  unfused, unfused_slots = _run(name, mode, "off", monkeypatch)
  assert len(fused) == len(unfused) == STEPS
  for step, (got, expected) in enumerate(zip(fused, unfused), start=1):
    for variable in expected:
      helpers.assert_same_bits(got[variable], expected[variable],
                               f"{variable}, step {step}")
  assert len(fused_slots) == len(unfused_slots) > 2
  for got, expected in zip(fused_slots, unfused_slots):
    helpers.assert_same_bits(got, expected, "m, v or the step")


def test_a_tf_function_step_with_the_kernel_has_no_restore():
  x = tf.Variable(np.ones((4, 3), np.float32), name="x")
  types = helpers.diagonal_step_types(x, L.Adam(0.1))
  assert KERNEL in types and "ResourceApplyAdam" not in types
  assert {"Select", "SelectV2", "MutexLock"}.isdisjoint(types)


def _graph_train(kernels, monkeypatch):
  """`spec.wrap(legacy Adam).get_updates` in a TF1 graph: x's values after
  each step, the op types of the train op's graph."""
  monkeypatch.setenv(_native.SWITCH, kernels)
  rng = np.random.default_rng(4)
  x0 = rng.normal(size=(6, 5)).astype(np.float32)
  frozen = rng.random(x0.shape) < 0.4
  poison = np.where(frozen, np.nan, 0).astype(np.float32)
  graph, values = tf.Graph(), []
  with graph.as_default():
    x = tf.compat.v1.Variable(x0, use_resource=True, name="x")
    loss = tf.reduce_sum(tf.square(x)) + tf.reduce_sum(
        x * tf.where(tf.constant(frozen), tf.constant(poison), 0.0))
    # As a canned Estimator steps it.
    (train_op,) = tfpartial.freeze(x, frozen).wrap(L.Adam(0.1)).get_updates(
        loss, [x])
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      for _ in range(3):
        session.run(train_op)
        values.append(session.run(x))
  helpers.assert_same_bits(values[-1][frozen], x0[frozen], "frozen")
  return values, {op.type for op in graph.get_operations()}


def test_in_a_tf1_graph_the_kernel_leaves_the_bits_the_unfused_step_leaves(
    monkeypatch):
  fused, types = _graph_train("on", monkeypatch)
  unfused, unfused_types = _graph_train("off", monkeypatch)
  assert KERNEL in types and "MutexLock" not in types
  assert KERNEL not in unfused_types
  for step, (got, expected) in enumerate(zip(fused, unfused), start=1):
    helpers.assert_same_bits(got, expected, f"x, step {step}")


class _MyAdam(L.Adam):
  pass


@pytest.mark.parametrize("case", ["amsgrad", "clipnorm", "transformers",
                                  "subclass", "sparse"])
def test_where_the_kernel_cannot_serve_the_step_stays_unfused(case):
  optimizer = {
      "amsgrad": lambda: L.Adam(0.1, amsgrad=True),
      "clipnorm": lambda: L.Adam(0.1, clipnorm=1.0),
      "transformers": lambda: L.Adam(0.1, gradient_transformers=[
          lambda pairs: pairs]),
      "subclass": lambda: _MyAdam(0.1),
      "sparse": lambda: L.Adam(0.1),  # Its sparse update is another one.
  }[case]()
  gradient = None
  if case == "sparse":
    gradient = lambda x: tf.IndexedSlices(tf.ones([2, 3]), tf.constant([0, 3]),
                                          tf.constant([4, 3]))
  x = tf.Variable(np.ones((4, 3), np.float32), name="x")
  types = helpers.diagonal_step_types(x, optimizer, gradient=gradient)
  assert KERNEL not in types
  assert "Select" in types or "SelectV2" in types


@pytest.mark.skipif(not hasattr(tf, "estimator"),
                    reason=f"tf.estimator is not in TensorFlow {tf.__version__}"
                    " (removed in 2.16; the py311-tf215 env runs this)")
def test_a_canned_estimator_s_legacy_adam_gets_the_kernel(tmp_path,
                                                         monkeypatch):
  """A DNNClassifier, part of its first layer frozen: the same bits with
  the kernel and without, and the frozen weights kept."""
  kernel_name = "dnn/hiddenlayer_0/kernel"
  spec = tfpartial.load_spec(f'{{"{kernel_name}": {{"freeze": ":2"}}}}')
  columns = [tf.feature_column.numeric_column("x", shape=(4,))]
  features = {"x": np.random.default_rng(2).normal(size=(8, 4)).astype(
      np.float32)}
  labels = np.array([0, 1] * 4, np.int64)
  values, ops = {}, {}
  for kernels in ("on", "off"):
    monkeypatch.setenv(_native.SWITCH, kernels)
    estimator = tf.estimator.DNNClassifier(
        hidden_units=[8], feature_columns=columns,
        model_dir=str(tmp_path / kernels),
        optimizer=lambda: spec.wrap(L.Adam(0.1)),
        config=tf.estimator.RunConfig(tf_random_seed=5))
    input_fn = lambda: tf.data.Dataset.from_tensors(  # pylint: disable=cell-var-from-loop
        (features, labels)).repeat()
    estimator.train(input_fn, steps=1)
    initial = estimator.get_variable_value(kernel_name)
    estimator.train(input_fn, steps=2)  # A new graph: bound again.
    values[kernels] = {name: estimator.get_variable_value(name)
                       for name in estimator.get_variable_names()}
    ops[kernels] = (tmp_path / kernels / "graph.pbtxt").read_text()
  assert f'op: "{KERNEL}"' in ops["on"] and f'op: "{KERNEL}"' not in ops["off"]
  helpers.assert_same_bits(values["on"][kernel_name][:2], initial[:2],
                           "frozen rows")
  for name, value in values["off"].items():
    helpers.assert_same_bits(values["on"][name], value, name)
