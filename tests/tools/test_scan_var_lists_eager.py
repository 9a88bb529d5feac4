"""`tfpartial scan`'s `var-list-filter` on TF2 custom loops: the list
passed to `tape.gradient` and `apply_gradients` is a part of the model's
variables while the loss runs the whole model. Gradual unfreezing trains
a slice of the layers that grows with the epoch (`model.layers[-epoch -
1:]`, ULMFiT); hand-written layers hand out their weights with a
`get_trainable_weights()` getter; the tape's own `watched_variables()`
filtered by name. Each source is synthetic, in the shape of real code
(part twelve's ULMFIT-in-Tensorflow, BERT-TF2)."""

import pytest

import scanned

_LOOP = """\
    def train(model, data, epochs, opt):
      for epoch in range(epochs):
        for x, y in data:
          with tf.GradientTape() as tape:
            loss = loss_fn(model(x), y)
          CHOSEN
          grads = tape.gradient(loss, weights)
          opt.apply_gradients(zip(grads, weights))
    """


def _loop(chosen):
  return _LOOP.replace("CHOSEN", chosen)


POSITIVE = {
    # The slice grows by a layer each epoch: the bottom stays frozen
    # until the last epoch.
    "gradual unfreezing by a slice on the epoch": _loop(
        "weights = [w for layer in model.layers[-epoch - 1:]"
        " for w in layer.trainable_weights]"),
    # Hand-written layers (no Keras base class) with a getter.
    "the last layers' getter of their weights": _loop(
        "weights = [w for layer in model.layers[-2:]"
        " for w in layer.get_trainable_weights()]"),
    # The tape's variables, kept by name.
    "the tape's watched variables filtered by name": _loop(
        "weights = [v for v in tape.watched_variables()"
        " if 'bert' in v.name]"),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_part_chosen_in_an_eager_loop_is_found(name):
  assert scanned.in_project(POSITIVE[name]) == [("var-list-filter", "t.py",
                                                 6)]


NEGATIVE = {
    # One layer each epoch, every layer trained in turn.
    "one layer per epoch, in turn": _loop(
        "weights = model.layers[epoch % 3].trainable_weights"),
    "a moving window of one layer": _loop(
        "weights = [w for layer in model.layers[epoch:epoch + 1]"
        " for w in layer.trainable_weights]"),
    "every layer's getter": _loop(
        "weights = [w for layer in model.layers"
        " for w in layer.get_trainable_weights()]"),
    "every watched variable": _loop(
        "weights = tape.watched_variables()"),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_every_variable_in_an_eager_loop_is_not_a_filter(name):
  assert scanned.in_project(NEGATIVE[name]) == []
