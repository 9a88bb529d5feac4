"""Classic question 2, TF1: train only w[0,0] and w[1,1] of a 2x2 variable.

The TF1 answer people reach for mixes `tf.stop_gradient` into the forward
pass (kept below for comparison). It only zeroes gradients, so an optimizer
that regularises, here ProximalAdagrad with l2, still shrinks the "frozen"
off-diagonal elements. The tfpartial port keeps the plain forward pass and
adds one `train_only` line.

Run: python legacy_examples/train_diagonal_tf1.py [--steps N]
"""

import argparse

import numpy as np
import tensorflow.compat.v1 as tf

import tfpartial

tf.disable_v2_behavior()

INITIAL = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
DIAGONAL = np.eye(2, dtype=bool)


def build(use_tfpartial):
  w = tf.Variable(INITIAL, name="w")
  if use_tfpartial:
    used = w
  else:  # The hand-made answer: gradients flow only through the diagonal.
    keep = DIAGONAL.astype(np.float32)
    used = keep * w + (1.0 - keep) * tf.stop_gradient(w)
  loss = tf.reduce_sum(tf.square(tf.matmul(used, [[1.0], [1.0]]) - 9.0))
  optimizer = tf.train.ProximalAdagradOptimizer(
      0.5, l2_regularization_strength=0.1)
  if use_tfpartial:
    return w, tfpartial.train_only(w, DIAGONAL).minimize(optimizer, loss)
  return w, optimizer.minimize(loss)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=200)
  steps = parser.parse_args().steps
  for use_tfpartial in (False, True):
    with tf.Graph().as_default():
      w, train_op = build(use_tfpartial)
      with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        for _ in range(steps):
          session.run(train_op)
        value = session.run(w)
    label = "tfpartial" if use_tfpartial else "stop_gradient"
    drift = np.abs(value - INITIAL)[~DIAGONAL].max()
    print(f"{label}: w = {value.round(4).tolist()}, off-diagonal drift "
          f"{drift:.6g}")


if __name__ == "__main__":
  main()
