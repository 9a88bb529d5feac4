"""A TF1 job that resumes from its last checkpoint, with tfpartial added.

A `Saver` loop that restores the latest checkpoint of `--model_dir`, if
any, and trains until `--steps`. Run it without tfpartial, then with it
(it resumes), then without it again (it resumes too): with `spec.wrap`,
the checkpoints have the plain run's layout, even for the fully frozen
bias, whose Adam slots a plain run has.

Run: python docs/examples/resume_job.py --model_dir DIR --steps N
"""

import argparse

import numpy as np
import tensorflow.compat.v1 as tf

import tfpartial

tf.disable_v2_behavior()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--model_dir", required=True)
  parser.add_argument("--steps", type=int, required=True)
  args = parser.parse_args()

  w = tf.get_variable("w", initializer=np.ones((2, 2), np.float32))
  b = tf.get_variable("b", initializer=np.ones(2, np.float32))
  global_step = tf.train.get_or_create_global_step()
  loss = tf.reduce_sum(tf.square(tf.matmul(w, w) + b))
  optimizer = tf.train.AdamOptimizer(0.1)
  spec = tfpartial.freeze(w, 0) | tfpartial.freeze(b)  # b: all of it
  optimizer = spec.wrap(optimizer)
  train_op = optimizer.minimize(loss, global_step=global_step)
  saver = tf.train.Saver()
  with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    latest = tf.train.latest_checkpoint(args.model_dir)
    if latest:
      saver.restore(session, latest)
    start, w0, b0 = session.run([global_step, w, b])
    while session.run(global_step) < args.steps:
      session.run(train_op)
    step, w1, b1 = session.run([global_step, w, b])
    saver.save(session, f"{args.model_dir}/model.ckpt", global_step=step)
  print(f"started at step {start}, stopped at step {step}")
  print(f"w[0] and b bit-for-bit as restored: "
        f"{w1[0].tobytes() == w0[0].tobytes() and b1.tobytes() == b0.tobytes()}")


if __name__ == "__main__":
  main()
