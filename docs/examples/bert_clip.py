"""BERT's `create_optimizer`, ported: a global-norm clip before the update.

The shape of Google BERT's `optimization.py` (`tf.gradients`, then
`tf.clip_by_global_norm`, then `apply_gradients`) on a tiny embedding
model, in a TF1 graph. The pretrained word rows and the position
embeddings must stay as they are while the new word rows train.

Run: python docs/examples/bert_clip.py
"""

import json

import numpy as np
import tensorflow.compat.v1 as tf

import tfpartial

tf.disable_v2_behavior()
WORDS = np.arange(12.0, dtype=np.float32).reshape(4, 3) / 10.0  # 2 new rows.
POSITIONS = np.ones((2, 3), np.float32)


def create_optimizer(loss, learning_rate):
  """As BERT makes its train op (with tf.train's Adam)."""
  global_step = tf.train.get_or_create_global_step()
  optimizer = tf.train.AdamOptimizer(learning_rate)
  spec = tfpartial.load_spec("freeze.json", tf.global_variables())
  optimizer = spec.wrap(optimizer)
  tvars = tf.trainable_variables()
  grads = tf.gradients(loss, tvars)
  grads = spec.mask(grads, tvars)
  (grads, norm) = tf.clip_by_global_norm(grads, clip_norm=1.0)
  train_op = optimizer.apply_gradients(zip(grads, tvars),
                                       global_step=global_step)
  return train_op, norm


def main():
  # The reviewed spec file: pretrained rows 0 and 1, all position embeddings.
  with open("freeze.json", "w") as spec_file:
    json.dump({"words": {"freeze": ":2"}, "positions": {"freeze": "..."}},
              spec_file)
  words = tf.get_variable("words", initializer=WORDS)
  positions = tf.get_variable("positions", initializer=POSITIONS)
  ids = tf.constant([[0, 3], [2, 3]])
  loss = tf.reduce_sum(tf.square(tf.gather(words, ids) + positions))
  train_op, norm = create_optimizer(loss, 0.1)
  with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    norms = [session.run([train_op, norm])[1] for _ in range(3)]
    words_after, positions_after = session.run([words, positions])
  print(f"global norm the clip saw at step 1: {norms[0]:.4f}")
  print("pretrained word rows bit-for-bit unchanged: "
        f"{words_after[:2].tobytes() == WORDS[:2].tobytes()}")
  print("position embeddings bit-for-bit unchanged: "
        f"{positions_after.tobytes() == POSITIONS.tobytes()}")
  print(f"new word rows trained: {bool((words_after[2:] != WORDS[2:]).all())}")


if __name__ == "__main__":
  main()
