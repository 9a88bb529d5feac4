"""Mixed precision through `compile`, with part of a layer frozen.

Under a `mixed_float16` policy, Keras' `compile` puts a
`LossScaleOptimizer` around the optimizer it is given; around a wrapped
optimizer, its overflow check would see the frozen gradients, so
tfpartial refuses that order. Wrap the loss-scale optimizer instead.

Run: python docs/examples/mixed_precision.py (Keras 3)
"""

import keras
import numpy as np

import tfpartial


def main():
  keras.mixed_precision.set_global_policy("mixed_float16")
  model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8),
                            keras.layers.Dense(1)])
  kernel = model.layers[0].kernel
  spec = tfpartial.freeze(kernel, np.s_[:2])  # Pretrained input rows.
  model.compile(optimizer=spec.wrap(
      keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(0.01))),
      loss="mse")
  before = kernel.numpy()
  model.fit(np.ones((8, 4)), np.zeros((8, 1)), batch_size=4, epochs=2,
            verbose=0)
  after = kernel.numpy()
  print("frozen rows bit-for-bit unchanged: "
        f"{after[:2].tobytes() == before[:2].tobytes()}")
  print(f"other rows trained: {bool((after[2:] != before[2:]).all())}")


if __name__ == "__main__":
  main()
