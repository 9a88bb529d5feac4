"""Classic question 2, TF2: train only w[0,0] and w[1,1] of a 2x2 variable.

Eager code with a `GradientTape` and a hand-written mask on the gradients,
next to its tfpartial port. The mask turns an Inf gradient on a frozen
element into NaN (0 * Inf) and writes it into the variable; tfpartial holds.

Run: python legacy_examples/train_diagonal_tf2.py [--steps N]
"""

import argparse

import numpy as np
import tensorflow as tf

import tfpartial

INITIAL = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
DIAGONAL = np.eye(2, dtype=bool)


def loss_fn(w):
  fit = tf.reduce_sum(tf.square(tf.matmul(w, [[1.0], [1.0]]) - 9.0))
  # sqrt(|w[0, 1] - 2|) has an Inf gradient right where the frozen w[0, 1]
  # sits: a stand-in for any log, sqrt or division that blows up there.
  return fit + tf.sqrt(tf.abs(w[0, 1] - 2.0))


def train(use_tfpartial, steps):
  w = tf.Variable(INITIAL, name="w")
  optimizer = tf.compat.v1.train.AdamOptimizer(0.1)
  spec = tfpartial.train_only(w, DIAGONAL)
  keep = tf.constant(DIAGONAL, tf.float32)
  for _ in range(steps):
    with tf.GradientTape() as tape:
      loss = loss_fn(w)
    grad = tape.gradient(loss, w)
    if use_tfpartial:
      spec.apply_gradients(optimizer, [(grad, w)])
    else:
      optimizer.apply_gradients([(grad * keep, w)])
  return w.numpy()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=200)
  steps = parser.parse_args().steps
  for use_tfpartial in (False, True):
    value = train(use_tfpartial, steps)
    label = "tfpartial" if use_tfpartial else "grads * mask"
    frozen = value[~DIAGONAL]
    held = np.array_equal(frozen.view(np.uint32),
                          INITIAL[~DIAGONAL].view(np.uint32))
    print(f"{label}: w = {value.round(4).tolist()}, off-diagonal "
          f"bit-for-bit unchanged: {held}")


if __name__ == "__main__":
  main()
