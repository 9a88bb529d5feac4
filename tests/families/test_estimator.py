"""The TF1 Estimator: a spec built inside `model_fn`, or bound there from a
spec file, with `spec.wrap(optimizer).minimize(loss, global_step)`.

Variables exist only inside `model_fn`, which the Estimator calls in a new
graph for every `train`; so the spec is made there each time. Training,
then a restart from the Estimator's own checkpoint, keeps every frozen
element bit for bit, and the trainable ones follow the split-variable
reference. `tf.estimator` ships with TensorFlow up to 2.15 only.
"""

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial

pytestmark = pytest.mark.skipif(
    not hasattr(tf, "estimator"),
    reason=f"tf.estimator is not in TensorFlow {tf.__version__} (it was "
    "removed in 2.16; the py311-tf215 env runs this)")

IDS = np.array([[0, 3], [4, 1], [2, 4]], np.int32)
Y = np.array([[1.0, -1.0], [0.5, 2.0], [-1.5, 0.5]], np.float32)
_RNG = np.random.default_rng(20261202)
EMB0 = _RNG.normal(size=(5, 3)).astype(np.float32)
W0 = _RNG.normal(size=(6, 2)).astype(np.float32)
B0 = _RNG.normal(size=(2,)).astype(np.float32)
SPEC_FILE = '{"emb": {"freeze": ":3"}, "b": {"freeze": "..."}}'
STEPS = 3


def _input_fn():
  return tf.data.Dataset.from_tensors((IDS, Y)).repeat()


def _model_fn(features, labels, mode, params):
  """A model_fn as TF1 code writes them; `params["spec"]` says how the
  spec is made: "built" here, "file" bound from a spec file, None plain."""
  emb = tf.compat.v1.get_variable("emb", initializer=EMB0)
  w = tf.compat.v1.get_variable("w", initializer=W0)
  b = tf.compat.v1.get_variable("b", initializer=B0)
  predictions = tf.matmul(
      tf.reshape(tf.gather(emb, features), [-1, 6]), w) + b
  loss = tf.reduce_sum(tf.square(predictions - labels))
  global_step = tf.compat.v1.train.get_global_step()
  optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
  if params["spec"] == "built":
    spec = tfpartial.freeze(emb, np.s_[:3]) | tfpartial.freeze(b)
    optimizer = spec.wrap(optimizer)
  elif params["spec"] == "file":
    spec = tfpartial.load_spec(params["path"],
                               tf.compat.v1.global_variables())
    optimizer = spec.wrap(optimizer)
  train_op = optimizer.minimize(loss, global_step)
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _split_model_fn(features, labels, mode, params):
  """The split reference: only emb's rows 3, 4 and w train."""
  del params
  emb_frozen = tf.compat.v1.get_variable("emb_frozen", initializer=EMB0[:3],
                                         trainable=False)
  emb_new = tf.compat.v1.get_variable("emb_new", initializer=EMB0[3:])
  w = tf.compat.v1.get_variable("w", initializer=W0)
  b = tf.compat.v1.get_variable("b", initializer=B0, trainable=False)
  emb = tf.concat([emb_frozen, emb_new], 0)
  predictions = tf.matmul(
      tf.reshape(tf.gather(emb, features), [-1, 6]), w) + b
  loss = tf.reduce_sum(tf.square(predictions - labels))
  train_op = tf.compat.v1.train.AdamOptimizer(0.1).minimize(
      loss, tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _train(model_fn, model_dir, params, steps=STEPS):
  estimator = tf.estimator.Estimator(model_fn, model_dir=str(model_dir),
                                     params=params)
  estimator.train(_input_fn, steps=steps)
  return estimator


def _values(estimator, names=("emb", "w", "b")):
  return {name: estimator.get_variable_value(name) for name in names}


@pytest.mark.parametrize("how", ["built", "file"])
def test_estimator_trains_restarts_and_keeps_the_freeze(tmp_path, how):
  path = tmp_path / "spec.json"
  path.write_text(SPEC_FILE)
  params = {"spec": how, "path": str(path)}
  first = _values(_train(_model_fn, tmp_path / "model", params))
  # A restart: a new Estimator on the same model_dir resumes from its
  # checkpoint (a new graph, a new spec inside model_fn).
  estimator = _train(_model_fn, tmp_path / "model", params)
  assert estimator.get_variable_value("global_step") == 2 * STEPS
  second = _values(estimator)
  reference = _train(_split_model_fn, tmp_path / "split", {},
                     steps=2 * STEPS)
  for step, values in ((STEPS, first), (2 * STEPS, second)):
    helpers.assert_same_bits(values["emb"][:3], EMB0[:3],
                             f"frozen rows, step {step}")
    helpers.assert_same_bits(values["b"], B0, f"frozen b, step {step}")
  np.testing.assert_allclose(second["emb"][3:],
                             reference.get_variable_value("emb_new"),
                             rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(second["w"], reference.get_variable_value("w"),
                             rtol=1e-5, atol=1e-6)
  assert not np.array_equal(second["emb"][3:], first["emb"][3:])
  # The Estimator's checkpoint has a plain run's layout (b's slots too): the
  # job resumes without tfpartial.
  names = set(estimator.get_variable_names())
  assert {"b/Adam", "b/Adam_1"} <= names
  plain = _train(_model_fn, tmp_path / "model", {"spec": None}, steps=1)
  assert plain.get_variable_value("global_step") == 2 * STEPS + 1


EMBEDDING = ("dnn/input_from_feature_columns/input_layer/ids_embedding/"
             "embedding_weights")


def _canned(model_dir, optimizer):
  """A canned DNNClassifier over an embedding column: the Estimator makes
  its variables inside `train`, after its optimizer exists. Tanh, seeded:
  a ReLU layer of 4 units can be dead for one id, whose row then has no
  gradient (seen in CI on 2.15)."""
  ids = tf.feature_column.categorical_column_with_identity("ids", 10)
  return tf.estimator.DNNClassifier(
      hidden_units=[4], model_dir=str(model_dir), optimizer=optimizer,
      activation_fn=tf.nn.tanh,
      config=tf.estimator.RunConfig(tf_random_seed=7),
      feature_columns=[tf.feature_column.embedding_column(ids, dimension=3)])


def _canned_input_fn():
  features = {"ids": np.array([[1], [6], [3], [8]], np.int64)}
  return tf.data.Dataset.from_tensors(
      (features, np.array([0, 1, 0, 1], np.int64))).repeat()


def test_a_canned_estimator_trains_with_a_spec_attached_to_its_optimizer(
    tmp_path):
  # The spec is a file loaded without variables; in each train's new graph
  # the Estimator makes its optimizer (a Keras optimizer object cannot be
  # reused across trains, with or without tfpartial), which binds the spec
  # by name at its first step.
  path = tmp_path / "spec.json"
  path.write_text('{"%s": {"freeze": ":5"}}' % EMBEDDING)
  spec = tfpartial.load_spec(str(path))
  estimator = _canned(tmp_path / "model", lambda: spec.wrap(
      tf.keras.optimizers.legacy.Adagrad(0.5)))
  estimator.train(_canned_input_fn, steps=2)
  first = estimator.get_variable_value(EMBEDDING)
  # A second train: a new graph, the same wrapped optimizer.
  estimator.train(_canned_input_fn, steps=3)
  assert estimator.get_variable_value("global_step") == 5
  second = estimator.get_variable_value(EMBEDDING)
  helpers.assert_same_bits(second[:5], first[:5], "frozen rows 0-4")
  # Rows 6 and 8 are looked up and train; so would 1 and 3 without it.
  assert (second[[6, 8]] != first[[6, 8]]).all()
  plain = _canned(tmp_path / "model",
                  lambda: tf.keras.optimizers.legacy.Adagrad(0.5))
  plain.train(_canned_input_fn, steps=1)
  moved = plain.get_variable_value(EMBEDDING)
  assert (moved[[1, 3]] != second[[1, 3]]).all()
