"""Classic question 1, TF2: fix x[0] at its initial value while x[1] trains.

The TF2 pattern: a `tf.function` training step with a `GradientTape`. Ported
to tfpartial by replacing `optimizer.apply_gradients(...)` with
`spec.apply_gradients(optimizer, ...)`.

Run: python legacy_examples/freeze_first_element_tf2.py [--steps N]
"""

import argparse

import numpy as np
import tensorflow as tf

import tfpartial


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=100)
  steps = parser.parse_args().steps

  x = tf.Variable([1.0, 2.0], name="x")
  optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
  spec = tfpartial.freeze(x, 0)

  @tf.function
  def train_step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(tf.square(x - 5.0))
    grads = tape.gradient(loss, [x])
    spec.apply_gradients(optimizer, zip(grads, [x]))  # Was optimizer.apply_...

  for _ in range(steps):
    train_step()
  value = x.numpy()
  held = np.float32(value[0]).view(np.uint32) == np.float32(1.0).view(
      np.uint32)
  print(f"x = [{value[0]:.6g}, {value[1]:.6g}] after {steps} steps")
  print(f"x[0] bit-for-bit unchanged: {held}")


if __name__ == "__main__":
  main()
