"""A TF1 Estimator (TensorFlow 2.15 and older), with part of a table frozen.

`tf.estimator` builds a new graph, and calls `model_fn` in it, for every
`train`, so the variables exist only there: the spec is bound there, from
the reviewed spec file `--spec`. Run it twice on one `--model_dir` and it
resumes; without `--spec` the same `model_fn` runs without tfpartial, and
resumes from the same checkpoints too.

Run: python docs/examples/estimator.py --model_dir DIR --steps N [--spec FILE]
"""

import argparse

import numpy as np
import tensorflow as tf

import tfpartial

EMB = np.arange(15, dtype=np.float32).reshape(5, 3) / 10.0  # Rows 3, 4 new.


def model_fn(features, labels, mode, params):
  emb = tf.compat.v1.get_variable("emb", initializer=EMB)
  b = tf.compat.v1.get_variable("b", initializer=np.zeros(3, np.float32))
  loss = tf.reduce_sum(tf.square(tf.gather(emb, features) + b - labels))
  optimizer = tf.compat.v1.train.AdamOptimizer(params["learning_rate"])
  if params["spec"]:  # Without one: plain TensorFlow.
    spec = tfpartial.load_spec(params["spec"],
                               tf.compat.v1.global_variables())
    optimizer = spec.wrap(optimizer)
  train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  return tf.data.Dataset.from_tensors(
      ([0, 3, 4], np.ones((3, 3), np.float32))).repeat()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model_dir", required=True)
  parser.add_argument("--steps", type=int, required=True)
  parser.add_argument("--spec", help="the reviewed spec file (none: no "
                      "tfpartial)")
  args = parser.parse_args()

  latest = tf.train.latest_checkpoint(args.model_dir)
  start = tf.train.load_variable(latest, "emb") if latest else EMB
  estimator = tf.estimator.Estimator(
      model_fn, args.model_dir,
      params={"learning_rate": 0.1, "spec": args.spec})
  estimator.train(input_fn, max_steps=args.steps)
  emb = estimator.get_variable_value("emb")
  print(f"global step {estimator.get_variable_value('global_step')}; "
        "pretrained rows bit-for-bit as restored: "
        f"{emb[:3].tobytes() == start[:3].tobytes()}")


if __name__ == "__main__":
  main()
