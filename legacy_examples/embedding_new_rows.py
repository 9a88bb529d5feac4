"""Fine-tune an embedding that gained new vocabulary rows.

The TF1 pattern: a pretrained table of V rows is extended with N rows for
new tokens (initialised fresh), and only those should learn. By hand this
means a second variable and a `tf.concat` in the lookup, rewriting every
lookup and checkpoint name; the port keeps the one table and says which
rows train. With `compact=True` the optimizer's slots cover only the new
rows, not the table.

Run: python legacy_examples/embedding_new_rows.py [--steps N] [--eager]
"""

import argparse

import numpy as np
import tensorflow as tf

import tfpartial

OLD, NEW, DIM = 10_000, 100, 16
RNG = np.random.default_rng(0)
PRETRAINED = RNG.normal(size=(OLD, DIM)).astype(np.float32)
TABLE0 = np.concatenate(
    [PRETRAINED, RNG.normal(0, 0.01, size=(NEW, DIM)).astype(np.float32)])
IDS = RNG.integers(0, OLD + NEW, size=(64,))
IDS[::2] = RNG.integers(OLD, OLD + NEW, size=32)  # New tokens, half the batch.


def loss_fn(table):
  return tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, IDS) - 0.5))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=30)
  parser.add_argument("--eager", action="store_true")
  args = parser.parse_args()
  v1 = tf.compat.v1
  if not args.eager:
    v1.disable_v2_behavior()
  table = v1.get_variable("embedding", initializer=TABLE0)
  optimizer = v1.train.AdamOptimizer(0.05)
  spec = tfpartial.train_only(table, np.s_[OLD:], compact=True)
  if args.eager:
    for _ in range(args.steps):
      spec.minimize(optimizer, lambda: loss_fn(table), var_list=[table])
    value = table.numpy()
  else:
    train_op = spec.minimize(optimizer, loss_fn(table))
    with v1.Session() as session:
      session.run(v1.global_variables_initializer())
      for _ in range(args.steps):
        session.run(train_op)
      value = session.run(table)
  slots = sum(int(np.prod(v.shape)) for v in optimizer.variables()
              if len(v.shape) == 2)
  held = np.array_equal(value[:OLD].view(np.uint32), PRETRAINED.view(np.uint32))
  print(f"pretrained rows bit-for-bit unchanged: {held}")
  seen = np.unique(IDS[IDS >= OLD])
  print(f"new rows in the batch trained: "
        f"{bool((value[seen] != TABLE0[seen]).any(axis=1).all())}")
  print(f"optimizer slot elements: {slots} (the table has {TABLE0.size})")


if __name__ == "__main__":
  main()
