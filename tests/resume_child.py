"""Child process for test_persistence.py: train, checkpoint, maybe die.

    python resume_child.py DIR STEPS [KILL_AT]

Restores the latest checkpoint in DIR if there is one, trains to STEPS with
a wrapped Keras AdamW, checkpointing after every step; with KILL_AT, kills
itself (SIGKILL, nothing flushed) right after saving that step. Writes
DIR/frozen.json: the frozen elements' bits at start and at the end.
"""

import json
import os
import signal
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import tfpartial  # pylint: disable=g-import-not-at-top

directory, steps = sys.argv[1], int(sys.argv[2])
kill_at = int(sys.argv[3]) if len(sys.argv) > 3 else None
x = tf.Variable(np.linspace(-1.0, 1.3, 12, dtype=np.float32).reshape(3, 4),
                name="x")
frozen = np.zeros((3, 4), bool)
frozen[:, 0] = True
spec = tfpartial.freeze(x, frozen)
optimizer = spec.wrap(keras.optimizers.AdamW(0.1, weight_decay=0.3))
optimizer.build([x])
checkpoint = tf.train.Checkpoint(x=x, optimizer=optimizer)
manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=2)
restored = manager.latest_checkpoint
if restored:
  checkpoint.restore(restored).assert_consumed()
start_bits = x.numpy()[frozen].view(np.uint32).tolist()


@tf.function
def step():
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.square(x - 3.0))
  optimizer.apply_gradients([(tape.gradient(loss, x), x)])


while int(optimizer.iterations) < steps:
  step()
  manager.save(checkpoint_number=int(optimizer.iterations))
  print(f"saved {int(optimizer.iterations)}", flush=True)
  if kill_at is not None and int(optimizer.iterations) == kill_at:
    os.kill(os.getpid(), signal.SIGKILL)
with open(os.path.join(directory, "frozen.json"), "w") as out:
  json.dump({"restored": restored, "start": start_bits,
             "end": x.numpy()[frozen].view(np.uint32).tolist(),
             "iterations": int(optimizer.iterations)}, out)
