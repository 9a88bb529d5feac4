"""`tfpartial scan`'s `var-list-filter` on TF2 custom loops: the list
passed to `tape.gradient` and `apply_gradients` is a part of the model's
variables while the loss runs the whole model. Gradual unfreezing trains
a slice of the layers that grows with the epoch (`model.layers[-epoch -
1:]`, ULMFiT). Each source is synthetic, in the shape of real code
(part twelve's ULMFIT-in-Tensorflow)."""

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
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_every_variable_in_an_eager_loop_is_not_a_filter(name):
  assert scanned.in_project(NEGATIVE[name]) == []
