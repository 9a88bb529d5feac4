"""`tfpartial scan`: a write whose value is the variable's own value read
out in the same call and moved by settings (`K.set_value(self.beta,
K.get_value(self.beta) + self.kappa)`: a KL warm-up in a callback's
`on_epoch_end`, greenelab/tybalt) is a schedule, not saved values
written back, however the read-out is spelled; nor is a batch norm's
moving statistics put back after each step (TENT): no optimizer trains
them. And the write-backs beside them that stay findings: a blend of a
saved copy with the value read out, a copy read before `fit` set back
after it, a trained scale put back beside the statistics."""

import pytest

import scanned

_CALLBACK = """\
    from keras import backend as K
    from keras.callbacks import Callback

    beta = K.variable(0)

    class WarmUp(Callback):
      def __init__(self, beta, kappa):
        self.beta = beta
        self.kappa = kappa

      def on_epoch_end(self, epoch, logs=None):
{body}

    model.compile("adam", loss=None, loss_weights=[beta])
    model.fit(x, y, callbacks=[WarmUp(beta, 0.1)])
    """


def _callback(body):
  return _CALLBACK.format(body=body)


CASES = {
    # The warm-up read out inline and moved by a setting (tybalt).
    "a warm-up read out inline": (_callback("""\
        if K.get_value(self.beta) <= 1:
          K.set_value(self.beta, K.get_value(self.beta) + self.kappa)"""),
                                  []),
    # The same, bounded by `min` and moved down.
    "a bounded schedule read out inline": (_callback("""\
        K.set_value(self.beta, min(K.get_value(self.beta) - self.kappa,
                                   1.0))"""), []),
    # The same, moved down and made a constant.
    "a schedule read out inline into a constant": (_callback("""\
        K.set_value(self.beta,
                    K.constant(K.get_value(self.beta) - self.kappa))"""),
                                                   []),
    # The same through `assign` and `numpy`.
    "a schedule read by numpy and assigned": (_callback("""\
        self.beta.assign(self.beta.numpy() + self.kappa * 2)"""), []),
    # A saved copy blended with the value read out: still a write-back.
    "a saved copy blended with the value read out": (_callback("""\
        K.set_value(self.beta, K.get_value(self.beta) * self.kappa
                    + saved * (1 - self.kappa))"""), [("write-back", 12)]),
    # A saved copy added to the value read out: not a setting.
    "a saved copy added to the value read out": (_callback("""\
        K.set_value(self.beta, K.get_value(self.beta) + saved)"""),
                                                  [("write-back", 12)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_schedule_read_out_inline_is_no_write_back(name):
  code, expected = CASES[name]
  assert scanned.in_text(code, "write-back") == expected


def test_weights_read_before_fit_set_back_after_it_stay_a_write_back():
  code = """\
      import tensorflow as tf
      model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
      model.compile("adam", "mse")
      saved = model.layers[0].get_weights()
      for epoch in range(10):
        model.fit(x, y, epochs=1)
        model.layers[0].set_weights(saved)
      """
  assert scanned.in_text(code, "write-back") == [("write-back", 7)]


_TENT = """\
    import tensorflow as tf

    def adapt(model, x, optimizer):
      bn = [l for l in model.layers if isinstance(
          l, tf.keras.layers.BatchNormalization)]
      params = [v for l in bn for v in (l.gamma, l.beta)]
      initial = {{}}
      for layer in bn:
        initial[layer.name] = (layer.moving_mean.numpy(), layer.gamma.numpy())
      for step in range(10):
        with tf.GradientTape() as tape:
          loss = entropy(model(x, training=True))
        grads = tape.gradient(loss, params)
        optimizer.apply_gradients(zip(grads, params))
        for layer in bn:
          mean0, gamma0 = initial[layer.name]
          {body}
    """


@pytest.mark.parametrize("body, expected", [
    # The moving statistics put back after each step (TENT): no weights.
    ("layer.moving_mean.assign(mean0)", []),
    ("layer.moving_variance[0].assign(mean0[0])", []),
    # A trained scale put back after each step: still a write-back.
    ("layer.gamma.assign(gamma0)", [("write-back", 17)]),
])
def test_batch_norm_statistics_put_back_are_no_write_back(body, expected):
  code = _TENT.format(body=body)
  assert scanned.in_text(code, "write-back") == expected
