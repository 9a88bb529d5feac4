"""`tfpartial scan`'s `weight-remask` beside a whole Keras training: a
mask written once before `fit` (one-shot pruning, SNIP, a lottery
ticket's rewind between two fits) or once after it (the final pruned
weights) is silent, since the weights train on freely; the same write
where it repeats with the training (in a loop around `fit`, in a function
that loop calls, in a callback or a `LambdaCallback`) is reported."""

import pytest

import scanned

_ONCE_IN_HELPER = """\
    import numpy as np
    import tensorflow as tf

    def prune(model, masks):
      for var, mask in zip(model.trainable_variables, masks):
        var.assign(var * mask)

    def run(x, y):
      model = build()
      masks = np.load('masks.npy', allow_pickle=True)
      CALL
      model.compile(optimizer='adam', loss='mse')
      model.fit(x, y, epochs=10)
      AFTER

    if __name__ == '__main__':
      run(*load())
    """

_MODULE_LEVEL = """\
    import numpy as np
    import tensorflow as tf

    model = build()
    masks = np.load('masks.npy', allow_pickle=True)
    model.compile(optimizer='adam', loss='mse')
    LOOP
    INDENTweights = model.get_weights()
    INDENTmodel.set_weights([w * m for w, m in zip(weights, masks)])
    INDENTmodel.fit(x, y, epochs=EPOCHS)
    """

_REWIND = """\
    import numpy as np
    import tensorflow as tf

    class Remask(tf.keras.callbacks.Callback):
      def __init__(self, masks):
        self.masks = masks

      def on_train_batch_end(self, batch, logs=None):
        for name, mask in self.masks.items():
          layer = self.model.get_layer(name)
          w = layer.get_weights()
          w[0] = w[0] * mask
          layer.set_weights(w)

    def lottery(model, x, y):
      initial = {}
      for layer in model.layers:
        initial[layer.name] = [np.copy(a) for a in layer.get_weights()]
      model.fit(x, y, epochs=5)
      masks = {}
      for name in ['head']:
        kernel = model.get_layer(name).get_weights()[0]
        masks[name] = (np.abs(kernel) >= np.percentile(
            np.abs(kernel), 80)).astype(np.float32)
      for layer in model.layers:
        w_init = [np.copy(a) for a in initial[layer.name]]
        if layer.name in masks:
          w_init[0] = w_init[0] * masks[layer.name]
        layer.set_weights(w_init)
      model.fit(x, y, epochs=5, callbacks=[Remask(masks)])

    lottery(build(), *load())
    """

_LAMBDA = """\
    import numpy as np
    import tensorflow as tf

    def train(model, x, y):
      masks = np.load('masks.npy', allow_pickle=True)
      remask = tf.keras.callbacks.LambdaCallback(
          on_batch_end=lambda batch, logs: model.set_weights(
              [w * m for w, m in zip(model.get_weights(), masks)]))
      model.fit(x, y, epochs=5, callbacks=[remask])
    """


@pytest.mark.parametrize("call, expected", [
    # Pruned once before the whole training: the weights train on.
    ("prune(model, masks)", []),
    # The same helper called again after each epoch's `fit`: a re-mask.
    ("for epoch in range(10):\n"
     "        model.fit(x, y, epochs=1)\n"
     "        prune(model, masks)", [("weight-remask", 6)]),
], ids=["once-before-fit", "after-each-epoch"])
def test_helper_writing_a_mask_beside_fit(call, expected):
  code = _ONCE_IN_HELPER.replace("CALL", call).replace("AFTER", "pass")
  assert scanned.in_text(code, "weight-remask") == expected


@pytest.mark.parametrize("loop, indent, epochs, expected", [
    # A script masking the weights once, then fitting them all.
    ("", "", "10", []),
    # The same in a loop of one-epoch fits: masked again each epoch.
    ("for epoch in range(10):", "    ", "1", [("weight-remask", 9)]),
], ids=["once-at-module-level", "each-epoch-at-module-level"])
def test_module_level_mask_beside_fit(loop, indent, epochs, expected):
  code = _MODULE_LEVEL.replace("LOOP", loop).replace(
      "INDENT", indent).replace("EPOCHS", epochs)
  assert scanned.in_text(code, "weight-remask") == expected


def test_lottery_rewind_between_fits_is_silent_its_callback_reported():
  # The rewind masked once between the two fits is no re-mask; the
  # callback's after each batch of the second fit is.
  assert scanned.in_text(_REWIND, "weight-remask") == [
      ("weight-remask", 13)]


def test_mask_after_the_last_fit_is_silent():
  code = _ONCE_IN_HELPER.replace("CALL", "pass").replace(
      "AFTER", "prune(model, masks)")
  assert scanned.in_text(code, "weight-remask") == []


def test_lambda_callback_beside_fit_is_reported():
  assert scanned.in_text(_LAMBDA, "weight-remask") == [("weight-remask", 7)]
