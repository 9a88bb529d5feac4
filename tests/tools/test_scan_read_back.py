"""`tfpartial scan`: saved values blended into a weight read out first,
through a method's local names (`now = K.get_value(w); K.set_value(x=w,
value=saved * m + (1 - m) * now)`), after each batch: a copy the layer
holds and saves again after each write is a `shadow-variable`
(yaysummeriscoming/DNS_and_INQ's INQLayer), a copy taken once is a
`write-back`; and the look-alikes that stay silent: a soft update from
another network, a moving average."""

import pytest

import scanned

_LAYER = """\
    from keras import backend as K
    from keras.callbacks import Callback
    from keras.layers import Conv2D

    class QuantLayer(Conv2D):
      def build(self, input_shape):
        super().build(input_shape)
        weights = K.get_value(self.weights[0])
        self.saved = weights.copy()
        self.mask = np.zeros(shape=weights.shape, dtype="uint8")

      def on_batch_end(self, batch):
        weights = K.get_value(self.weights[0])
{body}
        K.set_value(x=self.weights[0], value=new)
{saved}
      def on_epoch_begin(self, epoch):
        weights = K.get_value(self.weights[0])
        self.mask = np.logical_or(self.mask, np.abs(weights) > 0.1)

    class LayerUpdate(Callback):
      def on_batch_end(self, batch, logs=None):
        for layer in self.model.layers:
          call_method(layer, batch, "on_batch_end")

    def call_method(obj, iteration, name):
      fn = getattr(obj, name, None)
      if callable(fn):
        fn(iteration)

    model = Sequential([QuantLayer(8, 3)])
    model.compile("adam", "mse")
    model.fit(x, y, callbacks=[LayerUpdate()])
    """
_MASKED = """\
        kept = self.saved * self.mask
        rest = (1 - self.mask) * weights
        new = kept + rest"""


def _layer(body, saved=""):
  return _LAYER.format(body=body, saved=saved)


CASES = {
    # The quantised elements keep the layer's copy, saved again after each
    # write.
    "a held copy saved again after each write": (
        _layer(_MASKED, "        self.saved = new\n"),
        [("shadow-variable", 17)]),
    # The copy taken once, when the layer is built.
    "a copy taken once": (_layer(_MASKED), [("write-back", 17)]),
    # Another network's values blended in by a rate: a soft update.
    "a soft update from another network": (_layer("""\
        online = K.get_value(self.online.weights[0])
        new = self.tau * online + (1 - self.tau) * weights"""), []),
    # A moving average of the weights: no mask and its complement.
    "a moving average": (_layer("""\
        new = self.saved * 0.99 + 0.01 * weights""",
                                "        self.saved = new\n"), []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_values_blended_into_a_weight_read_out(name):
  code, expected = CASES[name]
  found = [f for f in scanned.in_text(code) if f[0] in {
      "shadow-variable", "write-back", "weight-remask"}]
  assert found == expected
