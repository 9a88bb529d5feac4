"""Classic question 1, TF1: fix x[0] at its initial value while x[1] trains.

The TF1 pattern: a graph, `optimizer.minimize(loss)` and a `Session` loop.
Ported to tfpartial by wrapping the optimizer; the diff is one line.

Run: python legacy_examples/freeze_first_element_tf1.py [--steps N]
"""

import argparse

import numpy as np
import tensorflow.compat.v1 as tf

import tfpartial

tf.disable_v2_behavior()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=100)
  steps = parser.parse_args().steps

  x = tf.Variable([1.0, 2.0], name="x")
  loss = tf.reduce_sum(tf.square(x - 5.0))
  optimizer = tf.train.GradientDescentOptimizer(0.1)
  optimizer = tfpartial.freeze(x, 0).wrap(optimizer)  # The one added line.
  train_op = optimizer.minimize(loss)

  with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    for _ in range(steps):
      session.run(train_op)
    value = session.run(x)
  held = np.float32(value[0]).view(np.uint32) == np.float32(1.0).view(
      np.uint32)
  print(f"x = [{value[0]:.6g}, {value[1]:.6g}] after {steps} steps")
  print(f"x[0] bit-for-bit unchanged: {held}")


if __name__ == "__main__":
  main()
