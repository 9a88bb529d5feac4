"""(q) A canned Estimator (TensorFlow 2.15, the last with `tf.estimator`):
a `DNNClassifier` with tiny steps, part of its first layer frozen, its
optimizer Keras 2's legacy Adam (what canned Estimators take), against the
same Estimator without tfpartial.

The step timed is the Estimator's own train op: its `model_fn` builds it
in a graph of the bench's (as `Estimator.train` does in its own), and a
session runs it, so the rounds interleave as every row's do.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, TextIO

import numpy as np
import tensorflow as tf

from tfpartial._api import _make
from tfpartial._tools.bench import _cases
from tfpartial._tools.bench._measure import Case

FROZEN = "dnn/hiddenlayer_0/kernel"


def _estimator_case(features: int, hidden: List[int], batch: int) -> Case:
  """Half the first layer's input rows frozen, loaded from a spec file's
  text as the migration guide's canned example does."""
  rng = np.random.default_rng(6)
  inputs = {"x": rng.normal(size=(batch, features)).astype(np.float32)}
  labels = (rng.random(batch) < 0.5).astype(np.int64)
  spec = _make.load_spec(f'{{"{FROZEN}": {{"freeze": ":{features // 2}"}}}}')

  def build(partial: bool) -> Callable[[], Any]:
    def optimizer() -> Any:
      adam = tf.keras.optimizers.legacy.Adam(1e-3)
      return spec.wrap(adam) if partial else adam

    estimator = tf.estimator.DNNClassifier(
        hidden_units=hidden, optimizer=optimizer,
        feature_columns=[tf.feature_column.numeric_column(
            "x", shape=(features,))],
        config=tf.estimator.RunConfig(tf_random_seed=1))
    graph = tf.Graph()
    with graph.as_default():
      tf.compat.v1.train.get_or_create_global_step()
      train_op = estimator.model_fn(
          {"x": tf.constant(inputs["x"])}, tf.constant(labels),
          tf.estimator.ModeKeys.TRAIN, estimator.config).train_op
      session = tf.compat.v1.Session(graph=graph)
      session.run([tf.compat.v1.global_variables_initializer(),
                   tf.compat.v1.tables_initializer()])
    return lambda: session.run(train_op)

  return Case(f"(q) canned DNNClassifier (TF 2.15), {features} features, "
              f"hidden {' and '.join(map(str, hidden))}, batch {batch}, "
              f"legacy Adam, half of the first layer frozen, "
              f"{_cases.kernel()}", build(False), build(True), "<= 1.05",
              limit=1.05)


def cases(quick: bool,
          progress: TextIO) -> Dict[str, List[Callable[[], Case]]]:
  """(q), by letter: its row where TensorFlow has `tf.estimator`, else
  none, with a note."""
  if not hasattr(tf, "estimator"):
    print(f"(q) the canned Estimator row needs tf.estimator (TensorFlow "
          f"2.15 or older; this is {tf.__version__}), and was left out",
          file=progress)
    return {"q": []}
  sizes: Dict[str, Any] = (dict(features=4, hidden=[4, 4], batch=4) if quick
                           else dict(features=32, hidden=[64, 32], batch=8))
  return {"q": [lambda: _estimator_case(**sizes)]}

