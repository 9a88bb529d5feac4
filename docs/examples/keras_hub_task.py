"""A model whose `compile` is its own (keras_hub's `Task`), saved and loaded.

keras_hub's `Task` models compile themselves in `__init__` with defaults
of their own and override `compile()`, so `keras.models.load_model` does
not compile them from the saved config: the loaded model's optimizer is
the default one, and the freeze is gone. `TinyTask` compiles itself the
same way (keras_hub is not needed). The port saves the spec file beside
the model and attaches it again after loading.

Run: python docs/examples/keras_hub_task.py (Keras 3)
"""

import warnings

import keras
import numpy as np

import tfpartial

IDS, LABELS = np.array([[0, 4, 5], [5, 1, 4]]), np.array([1, 0])


@keras.saving.register_keras_serializable(package="examples")
class TinyTask(keras.Model):
  """Compiles itself with defaults of its own, as keras_hub's Task does."""

  def __init__(self, **kwargs):
    ids = keras.Input((3,), dtype="int32")
    hidden = keras.layers.Embedding(6, 4, name="embedding")(ids)
    hidden = keras.layers.GlobalAveragePooling1D()(hidden)
    super().__init__(inputs=ids, outputs=keras.layers.Dense(2)(hidden),
                     **kwargs)
    self.compile()

  def compile(self, optimizer="auto", loss="auto", **kwargs):
    super().compile(
        optimizer=(keras.optimizers.Adam(5e-5) if optimizer == "auto"
                   else optimizer),
        loss=(keras.losses.SparseCategoricalCrossentropy(from_logits=True)
              if loss == "auto" else loss), **kwargs)

  def get_config(self):
    return {"name": self.name}


def main():
  classifier = TinyTask()
  table = classifier.get_layer("embedding").embeddings
  spec = tfpartial.freeze(table, np.s_[:4])  # The pretrained rows.
  classifier.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.05)))
  classifier.fit(IDS, LABELS, verbose=0)
  classifier.save("classifier.keras")
  spec.to_json("classifier.freeze.json")
  pretrained = table.numpy()[:4].copy()

  # ... later:
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Keras: compile() was not called ...
    classifier = keras.models.load_model("classifier.keras")
  print(f"spec of the loaded model: {tfpartial.spec_of(classifier)}")
  if tfpartial.spec_of(classifier) is None:
    spec = tfpartial.load_spec("classifier.freeze.json", classifier)
    classifier.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.05)))
    classifier.optimizer.build(classifier.trainable_variables)
    classifier.load_weights("classifier.keras")
  classifier.fit(IDS, LABELS, epochs=2, verbose=0)
  table = classifier.get_layer("embedding").embeddings
  print("pretrained rows bit-for-bit unchanged: "
        f"{table.numpy()[:4].tobytes() == pretrained.tobytes()}")


if __name__ == "__main__":
  main()
