"""A canned wide & deep Estimator, both optimizers wrapped with one spec.

`DNNLinearCombinedClassifier` trains its linear part with FTRL and its DNN
part with Adagrad; one spec file, loaded without variables, freezes rows
of the DNN's embedding and of the linear weight, and each optimizer binds
the variables it trains (`tfpartial.load_spec`'s contract). One model dir
holds the whole story, trained once per module: a plain run, tfpartial
resuming from it for two `train` calls (two graphs), then the plain run
resuming from tfpartial's checkpoint. `tf.estimator` ships with TensorFlow
up to 2.15 only.
"""

import json

import numpy as np
import pytest
import tensorflow as tf

import helpers
import tfpartial
from tfpartial import cli

pytestmark = pytest.mark.skipif(
    not hasattr(tf, "estimator"),
    reason=f"tf.estimator is not in TensorFlow {tf.__version__} (it was "
    "removed in 2.16; the py311-tf215 env runs this)")

EMBEDDING = ("dnn/input_from_feature_columns/input_layer/ids_embedding/"
             "embedding_weights")
LINEAR = "linear/linear_model/ids/weights"
# Rows 1 and 2 of both are looked up, so they would train: frozen here.
SPEC = {EMBEDDING: {"freeze": ":3"}, LINEAR: {"freeze": "1:3"}}
STEPS = 2


def _input_fn():
  features = {"ids": np.array([[1], [4], [2], [5]], np.int64)}
  return tf.data.Dataset.from_tensors(
      (features, np.array([0, 1, 0, 1], np.int64))).repeat()


def _estimator(estimator_class, model_dir, spec=None, wrapped=None):
  """The canned wide & deep model; with `spec`, each optimizer wrapped by
  a callable (a Keras optimizer object serves one `train` only), or the
  `wrapped` objects given."""
  ids = tf.feature_column.categorical_column_with_identity("ids", 6)
  if wrapped is not None:
    linear, dnn = wrapped
  else:
    wrap = (lambda optimizer: optimizer) if spec is None else spec.wrap
    linear = lambda: wrap(tf.keras.optimizers.legacy.Ftrl(
        0.2, l2_shrinkage_regularization_strength=0.05))
    dnn = lambda: wrap(tf.keras.optimizers.legacy.Adagrad(0.5))
  return estimator_class(
      model_dir=str(model_dir), linear_feature_columns=[ids],
      linear_optimizer=linear, dnn_optimizer=dnn, dnn_hidden_units=[2],
      dnn_feature_columns=[tf.feature_column.embedding_column(ids, 2)],
      # Not ReLU: a hidden unit that starts dead would train no row.
      dnn_activation_fn=tf.nn.tanh)


def _checkpoint(estimator):
  """The path and the values of the latest checkpoint."""
  path = estimator.latest_checkpoint()
  reader = tf.train.load_checkpoint(path)
  names = reader.get_variable_to_shape_map()
  return path, {name: reader.get_tensor(name) for name in names}


@pytest.fixture(scope="module")
def story(tmp_path_factory):
  """The checkpoints of: plain, tfpartial, tfpartial again (a second
  `train`, a new graph), plain again; and the error a typo gives."""
  folder = tmp_path_factory.mktemp("wide_and_deep")
  spec_path = folder / "spec.json"
  spec_path.write_text(json.dumps(SPEC))
  spec = tfpartial.load_spec(str(spec_path))
  model_dir = folder / "model"
  checkpoints = {}
  for name, uses in (("plain", None), ("tfpartial", spec),
                     ("tfpartial_again", spec), ("plain_again", None)):
    estimator = _estimator(tf.estimator.DNNLinearCombinedClassifier,
                           model_dir, uses)
    estimator.train(_input_fn, steps=STEPS)
    checkpoints[name] = _checkpoint(estimator)
  typo = tfpartial.load_spec(json.dumps(
      {EMBEDDING: {"freeze": ":3"}, LINEAR + "s": {"freeze": "1:3"}}))
  with pytest.raises(ValueError) as error:
    _estimator(tf.estimator.DNNLinearCombinedClassifier, model_dir,
               typo).train(_input_fn, steps=1)
  return checkpoints, spec_path, str(error.value)


def test_each_optimizer_binds_what_it_trains_and_the_freeze_holds(story):
  checkpoints, _, _ = story
  start = checkpoints["plain"][1]
  for run in ("tfpartial", "tfpartial_again"):
    values = checkpoints[run][1]
    helpers.assert_same_bits(values[EMBEDDING][:3], start[EMBEDDING][:3],
                             f"embedding rows 0-2, {run}")
    helpers.assert_same_bits(values[LINEAR][1:3], start[LINEAR][1:3],
                             f"linear rows 1-2, {run}")
  # What trains trains, in each train call: rows 4 and 5 are looked up.
  for before, after in (("plain", "tfpartial"),
                        ("tfpartial", "tfpartial_again")):
    old, new = checkpoints[before][1], checkpoints[after][1]
    assert (new[EMBEDDING][[4, 5]] != old[EMBEDDING][[4, 5]]).all()
    assert (new[LINEAR][[4, 5]] != old[LINEAR][[4, 5]]).all()
  # And the frozen rows would: the plain run resumed moves them.
  again = checkpoints["plain_again"][1]
  last = checkpoints["tfpartial_again"][1]
  assert (again[EMBEDDING][1:3] != last[EMBEDDING][1:3]).all()
  assert (again[LINEAR][1:3] != last[LINEAR][1:3]).all()
  assert again["global_step"] == 4 * STEPS


def test_checkpoints_move_both_ways_with_one_layout(story):
  checkpoints, _, _ = story
  layouts = {run: {name: value.shape for name, value in values.items()}
             for run, (_, values) in checkpoints.items()}
  assert layouts["tfpartial"] == layouts["plain"]
  assert layouts["tfpartial_again"] == layouts["plain_again"]
  assert layouts["tfpartial"] == layouts["plain_again"]
  # Slots of the frozen rows too (FTRL's accumulator and linear).
  assert f"training/Ftrl/{LINEAR}/accumulator" in layouts["tfpartial"]


def test_verify_holds_for_tfpartial_and_not_for_the_plain_run(story, capsys):
  checkpoints, spec_path, _ = story

  def verify(before, after):
    return cli.main(["verify", checkpoints[before][0],
                     checkpoints[after][0], "--spec", str(spec_path)])

  assert verify("plain", "tfpartial") == 0
  assert verify("tfpartial", "tfpartial_again") == 0
  assert verify("tfpartial_again", "plain_again") == 1
  capsys.readouterr()


def test_a_name_no_optimizer_trains_is_an_error_naming_the_nearest(story):
  _, _, error = story
  assert error.startswith(
      f"the spec names '{LINEAR}s', which is not among the variables the 2 "
      "optimizers sharing the spec train (")
  assert f"; the nearest names are '{LINEAR}'" in error


def test_the_v1_estimator_with_wrapped_optimizer_objects(tmp_path):
  # `tf.compat.v1.estimator`: tf.compat.v1 optimizers, reused across
  # `train` calls; its embedding is a table of one part (`.../part_0`).
  path = tmp_path / "spec.json"
  path.write_text(json.dumps(SPEC))
  spec = tfpartial.load_spec(str(path))
  wrapped = (spec.wrap(tf.compat.v1.train.FtrlOptimizer(0.2)),
             spec.wrap(tf.compat.v1.train.AdagradOptimizer(0.5)))
  estimator = _estimator(tf.compat.v1.estimator.DNNLinearCombinedClassifier,
                         tmp_path / "model", wrapped=wrapped)
  estimator.train(_input_fn, steps=1)
  before = _checkpoint(estimator)
  estimator.train(_input_fn, steps=STEPS)  # A new graph, the same objects.
  after = _checkpoint(estimator)
  helpers.assert_same_bits(after[1][EMBEDDING][:3], before[1][EMBEDDING][:3],
                           "embedding rows 0-2")
  helpers.assert_same_bits(after[1][LINEAR][1:3], before[1][LINEAR][1:3],
                           "linear rows 1-2")
  assert (after[1][LINEAR][[4, 5]] != before[1][LINEAR][[4, 5]]).all()
  assert cli.main(["verify", before[0], after[0], "--spec", str(path)]) == 0
