"""A TF2 training loop that clips by global norm, ported.

`tf.GradientTape`, `tf.clip_by_global_norm`, `optimizer.apply_gradients`
in a `tf.function`, with a Keras optimizer; the pretrained embedding rows
must stay as they are while the new rows and the dense layer train.

Run: python docs/examples/clip_tf2.py
"""

import numpy as np
import tensorflow as tf

import tfpartial

# Rows 0 and 1 are pretrained, rows 2 and 3 new.
TABLE = np.arange(12.0, 0.0, -1.0, dtype=np.float32).reshape(4, 3) / 10.0
DENSE = np.ones((3, 2), np.float32)


def main():
  embeddings = tf.Variable(TABLE, name="embeddings")
  dense = tf.Variable(DENSE, name="dense")
  variables = [embeddings, dense]
  optimizer = tf.keras.optimizers.Adam(0.1)
  spec = tfpartial.freeze(embeddings, np.s_[:2])
  optimizer = spec.wrap(optimizer)

  @tf.function
  def train_step(ids):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(tf.square(
          tf.matmul(tf.gather(embeddings, ids), dense)))
    grads = tape.gradient(loss, variables)
    grads = spec.mask(grads, variables)
    grads, norm = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, variables))
    return norm

  norms = [float(train_step(tf.constant([0, 1, 2, 3]))) for _ in range(3)]
  print(f"global norm the clip saw at step 1: {norms[0]:.4f}")
  print("pretrained rows bit-for-bit unchanged: "
        f"{embeddings.numpy()[:2].tobytes() == TABLE[:2].tobytes()}")
  print(f"new rows trained: {bool((embeddings.numpy()[2:] != TABLE[2:]).all())}")


if __name__ == "__main__":
  main()
