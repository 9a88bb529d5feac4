"""A MonitoredTrainingSession loop with hooks and a Saver, ported.

The TF1 production pattern: `tf.train.MonitoredTrainingSession` with a
checkpoint directory (its Saver and CheckpointSaverHook), a StopAtStepHook,
a LoggingTensorHook, and `optimizer.minimize(loss, global_step=...)`. The
port wraps the optimizer; nothing else changes, and a second run resumes
from the last checkpoint with the frozen row as it was.

Run: python legacy_examples/monitored_session.py --checkpoint_dir DIR
       [--last_step N]
"""

import argparse

import numpy as np
import tensorflow.compat.v1 as tf

import tfpartial

tf.disable_v2_behavior()
INITIAL = np.arange(12, dtype=np.float32).reshape(3, 4) / 10.0


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--checkpoint_dir", required=True)
  parser.add_argument("--last_step", type=int, default=20)
  args = parser.parse_args()

  weights = tf.get_variable("weights", initializer=INITIAL)
  global_step = tf.train.get_or_create_global_step()
  loss = tf.reduce_sum(tf.square(tf.matmul(weights, tf.ones([4, 1])) - 1.0))
  optimizer = tf.train.AdamOptimizer(0.05)
  optimizer = tfpartial.freeze(weights, 0).wrap(optimizer)  # The port.
  train_op = optimizer.minimize(loss, global_step=global_step)

  hooks = [tf.train.StopAtStepHook(last_step=args.last_step),
           tf.train.LoggingTensorHook({"step": global_step}, every_n_iter=100)]
  with tf.train.MonitoredTrainingSession(
      checkpoint_dir=args.checkpoint_dir, save_checkpoint_steps=5,
      hooks=hooks) as session:
    start = None
    while not session.should_stop():
      if start is None:
        start = session.run(global_step)
      _, step, value = session.run([train_op, global_step, weights])
  held = np.array_equal(value[0].view(np.uint32), INITIAL[0].view(np.uint32))
  print(f"started at step {start}, stopped at step {step}")
  print(f"row 0 bit-for-bit unchanged: {held}")
  print(f"rows 1-2 trained: {bool((value[1:] != INITIAL[1:]).all())}")


if __name__ == "__main__":
  main()
