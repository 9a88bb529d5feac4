"""`tfpartial.spec_of` on loaded models, and models whose `compile` is
their own (keras_hub's `Task`): the freeze is gone after `load_model`,
`spec_of` says so, and the recipe re-attaches it.
"""

import functools
import warnings

import numpy as np
import pytest

import helpers
import tfpartial


@functools.lru_cache(maxsize=None)
def _tiny_task_class():
  """A model made the way keras_hub's `Task` models are: it compiles itself
  in `__init__`, and its `compile()` has defaults of its own. So Keras, on
  `load_model`, makes it anew (compiled with those defaults) and does not
  compile it from the saved config."""
  import keras  # pylint: disable=g-import-not-at-top

  @keras.saving.register_keras_serializable(package="tfpartial_tests")
  class TinyTask(keras.Model):

    def __init__(self, vocabulary=6, classes=2, **kwargs):
      ids = keras.Input((3,), dtype="int32")
      hidden = keras.layers.Embedding(vocabulary, 4, name="embedding")(ids)
      hidden = keras.layers.GlobalAveragePooling1D()(hidden)
      logits = keras.layers.Dense(classes, name="logits")(hidden)
      super().__init__(inputs=ids, outputs=logits, **kwargs)
      self.vocabulary, self.classes = vocabulary, classes
      self.compile()

    def compile(self, optimizer="auto", loss="auto", *, metrics="auto",
                **kwargs):
      if optimizer == "auto":
        optimizer = keras.optimizers.Adam(5e-5)
      if loss == "auto":
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
      if metrics == "auto":
        metrics = [keras.metrics.SparseCategoricalAccuracy()]
      super().compile(optimizer=optimizer, loss=loss, metrics=metrics,
                      **kwargs)

    def get_config(self):
      return {"vocabulary": self.vocabulary, "classes": self.classes,
              "name": self.name}

    @classmethod
    def from_config(cls, config):
      return cls(**config)

  return TinyTask


TASK_IDS = np.array([[0, 4, 5], [5, 1, 4]], np.int32)
TASK_LABELS = np.array([1, 0], np.int32)


def _table(model):
  return model.get_layer("embedding").embeddings


def _load_task(path):
  """`load_model`, and the two warnings Keras gives: compile was not called
  from the config, and the saved optimizer state was skipped (the default
  optimizer made in `__init__` is not built)."""
  import keras  # pylint: disable=g-import-not-at-top
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    model = keras.models.load_model(path)
  messages = " | ".join(str(w.message) for w in caught)
  assert "`compile()` was not called as part of model loading" in messages
  assert "Skipping variable loading for optimizer" in messages
  return model


@helpers.needs_keras_3
def test_a_model_with_its_own_compile_loses_the_freeze_on_load_and_the_recipe(
    tmp_path):
  import keras  # pylint: disable=g-import-not-at-top
  model = _tiny_task_class()()
  table = _table(model)
  spec = tfpartial.freeze(table, np.s_[:4])  # Pretrained rows.
  model.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.05)))
  assert tfpartial.spec_of(model) == spec
  pretrained = table.numpy()[:4]
  model.fit(TASK_IDS, TASK_LABELS, epochs=2, verbose=0)
  helpers.assert_same_bits(table.numpy()[:4], pretrained, "pretrained rows")
  spec.to_json(tmp_path / "spec.json")
  model.save(tmp_path / "task.keras")

  # Loaded, it is compiled with its own defaults: the freeze is gone.
  loaded = _load_task(tmp_path / "task.keras")
  assert tfpartial.spec_of(loaded) is None
  assert type(loaded.optimizer) is keras.optimizers.Adam
  loaded.fit(TASK_IDS, TASK_LABELS, epochs=1, verbose=0)
  assert not np.array_equal(_table(loaded).numpy()[:4], pretrained)

  # The recipe: check with spec_of after loading; re-attach from the spec
  # file; load the weights again for the optimizer's state.
  loaded = _load_task(tmp_path / "task.keras")
  if tfpartial.spec_of(loaded) is None:
    spec = tfpartial.load_spec(tmp_path / "spec.json", loaded)
    loaded.compile(optimizer=spec.wrap(keras.optimizers.Adam(0.05)))
    loaded.optimizer.build(loaded.trainable_variables)
    loaded.load_weights(tmp_path / "task.keras")
  assert tfpartial.spec_of(loaded) == spec
  assert int(loaded.optimizer.iterations) == 2  # The state came back too.
  before = _table(loaded).numpy()
  loaded.fit(TASK_IDS, TASK_LABELS, epochs=2, verbose=0)
  after = _table(loaded).numpy()
  helpers.assert_same_bits(after[:4], pretrained, "pretrained rows")
  assert not np.array_equal(after[4:], before[4:])


def _keras_families():
  """name -> Keras package: Keras 3 and Keras 2 (tf_keras, or `keras` on
  TensorFlow 2.15), as installed."""
  import keras  # pylint: disable=g-import-not-at-top
  if not helpers.KERAS_3:
    return {"keras2": keras}
  families = {"keras3": keras}
  try:
    import tf_keras  # pylint: disable=g-import-not-at-top
    families["tf_keras"] = tf_keras
  except ImportError:
    pass
  return families


@pytest.mark.parametrize("legacy", [False, True], ids=["new", "legacy"])
@pytest.mark.parametrize("package", sorted(_keras_families()))
def test_spec_of_a_loaded_model_says_what_it_freezes_before_any_step(
    tmp_path, package, legacy):
  keras = _keras_families()[package]
  if legacy and package == "keras3":
    pytest.skip("Keras 3 has no legacy optimizers")
  model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
  kernel = model.trainable_variables[0]
  spec = tfpartial.freeze(kernel, 0)
  optimizer = (keras.optimizers.legacy.Adam(0.1) if legacy
               else keras.optimizers.Adam(0.1))
  model.compile(optimizer=spec.wrap(optimizer), loss="mse")
  model.fit(np.ones((2, 3)), np.zeros((2, 2)), verbose=0)
  model.save(tmp_path / "model.keras")
  loaded = keras.models.load_model(tmp_path / "model.keras")
  found = tfpartial.spec_of(loaded)
  assert found is not None, "the loaded model freezes kernel row 0"
  assert found.variables == (loaded.trainable_variables[0],)
  np.testing.assert_array_equal(
      found.frozen_mask(loaded.trainable_variables[0]),
      spec.frozen_mask(kernel))
  before = loaded.trainable_variables[0].numpy()
  loaded.fit(np.ones((2, 3)), np.zeros((2, 2)), verbose=0)
  helpers.assert_same_bits(loaded.trainable_variables[0].numpy()[0],
                           before[0], "kernel row 0")
  assert tfpartial.spec_of(loaded) == found
