"""`tfpartial scan` reads a mask by its name in other languages too:
`masc`, `mascara`, `maschera` (Catalan, Spanish, Italian), `masque`
(French), as Maxine's pruning callback names the fixed masks it
multiplies into each Dense kernel before every batch. The look-alikes
stay silent: a `mascot`, and a mask drawn anew each batch (dropout of
weights). Synthetic sources in the shape of real code (part
twenty-four)."""

import pytest
import scanned


_CALLBACK = """\
    class PruningCallback(tf.keras.callbacks.Callback):
      def __init__(self, dense_layers, WORD_list):
        super().__init__()
        self.dense_layers = dense_layers
        self.WORD_list = WORD_list

      def on_train_batch_begin(self, batch, logs=None):
        for layer, WORD in zip(self.dense_layers, self.WORD_list):
          weights = layer.get_weights()
          new_weights = np.multiply(weights[0], WORD)
          weights[0] = new_weights
          layer.set_weights(weights)

    def fit(model, x, y, layers, WORD_list):
      model.fit(x, y, callbacks=[PruningCallback(layers, WORD_list)])
    """

_DRAWN = """\
    class WeightDropout(tf.keras.callbacks.Callback):
      def on_train_batch_begin(self, batch, logs=None):
        for layer in self.model.layers:
          weights = layer.get_weights()
          WORD = np.random.rand(*weights[0].shape) < 0.9
          weights[0] = np.multiply(weights[0], WORD)
          layer.set_weights(weights)

    def fit(model, x, y):
      model.fit(x, y, callbacks=[WeightDropout()])
    """


_found = scanned.found


@pytest.mark.parametrize("word, expected", [
    ("masc", [("weight-remask", 12)]),
    ("hp_masc", [("weight-remask", 12)]),
    ("mascara", [("weight-remask", 12)]),
    ("maschera", [("weight-remask", 12)]),
    ("masque", [("weight-remask", 12)]),
    ("mask", [("weight-remask", 12)]),
    # The look-alike: a name that only starts like the word.
    ("mascot", []),
])
def test_a_callback_multiplying_kernels_by_fixed_masks(word, expected):
  assert _found(_CALLBACK.replace("WORD", word)) == expected


@pytest.mark.parametrize("word", ["masc", "mask"])
def test_a_mask_drawn_anew_each_batch_is_silent(word):
  # The name says mask; the draw in the callback says it changes.
  assert _found(_DRAWN.replace("WORD", word)) == []
