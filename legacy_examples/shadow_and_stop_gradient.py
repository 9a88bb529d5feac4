"""The two classic TF1 answers for freezing x[0], next to their port.

1. The shadow-variable answer: a non-trainable copy of x[0] and, under
   `tf.control_dependencies([train_op])`, a `tf.scatter_update` writing it
   back after every step.
2. The `tf.stop_gradient` answer: x = mask * x + (1 - mask) * stop_gradient(x)
   in the forward pass, so the gradient of x[0] is zero.
3. The port: `tfpartial.freeze(x, 0).minimize(optimizer, loss)`.

Each trains with FTRL (l1), then the user loads new weights between steps
(as a checkpoint restore or a pretrained load does), then trains on. x[0]
must end as the loaded value, bit for bit. The answer 1 writes its stale
copy back; answer 2 lets FTRL's l1 move x[0] (its gradient is zero, not
its update).

Run: python legacy_examples/shadow_and_stop_gradient.py [--steps N]
"""

import argparse

import numpy as np
import tensorflow.compat.v1 as tf

import tfpartial

tf.disable_v2_behavior()
LOADED = np.array([7.0, 7.0, 7.0], np.float32)


def build(answer):
  x = tf.Variable([1.0, 2.0, 3.0], name="x")
  optimizer = tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.5)
  if answer == "shadow":
    shadow = tf.Variable(x.initialized_value()[0], trainable=False)
    train = optimizer.minimize(tf.reduce_sum(tf.square(x - 4.0)))
    with tf.control_dependencies([train]):
      train_op = tf.scatter_update(x, [0], tf.expand_dims(shadow, 0))
  elif answer == "stop_gradient":
    mask = tf.constant([0.0, 1.0, 1.0])
    used = mask * x + (1.0 - mask) * tf.stop_gradient(x)
    train_op = optimizer.minimize(tf.reduce_sum(tf.square(used - 4.0)))
  else:
    train_op = tfpartial.freeze(x, 0).minimize(
        optimizer, tf.reduce_sum(tf.square(x - 4.0)))
  return x, train_op


def run(answer, steps):
  with tf.Graph().as_default():
    x, train_op = build(answer)
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      for step in range(steps):
        if step == steps // 2:
          x.load(LOADED, session)  # New weights, between two steps.
        session.run(train_op)
      return session.run(x)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=6)
  steps = parser.parse_args().steps
  print(f"{'answer':<14} {'x[0] at the end':>16} {'off by':>8}  held")
  for answer in ("shadow", "stop_gradient", "tfpartial"):
    x0 = run(answer, steps)[0]
    held = np.float32(x0).view(np.uint32) == LOADED[0].view(np.uint32)
    print(f"{answer:<14} {x0:16.6g} {abs(x0 - LOADED[0]):8.4g}  {held}")


if __name__ == "__main__":
  main()
