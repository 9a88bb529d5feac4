"""`tfpartial scan` on writes that undo or mirror a step rather than
freeze part of it: every variable the step trains put back (a line
search, a tuner's trial reset), and a target network's soft update done
on NumPy copies; beside them, the writes that do freeze (one layer put
back after each fit, some of the stepped variables restored)."""

import pytest

import scanned


def _writes(code):
  return [f for f in scanned.in_text(code) if f[0] in {
      "write-back", "shadow-variable", "weight-remask"}]


NEGATIVE = {
    # A line search in a custom `train_step`: every variable the step
    # trained is put back from its copy when the loss went up.
    "every stepped variable restored after the step": """\
        class Det(tf.keras.Model):
          def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
              loss = self.compiled_loss(y, self(x, training=True))
            trainable_vars = self.trainable_variables
            for i in range(len(trainable_vars)):
              self.backup[i].assign(trainable_vars[i])
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply_gradients(zip(gradients, trainable_vars))
            new_loss = self.compiled_loss(y, self(x, training=True))
            for i in range(len(trainable_vars)):
              trainable_vars[i].assign(self.backup[i])
            return {"loss": loss, "new_loss": new_loss}
        """,
    # A tuner: each trial fits from the same saved weights, put back whole
    # into the model it fits.
    "a tuner putting the whole model back after each trial": """\
        class Tuner:
          def tune(self, x, y, batch_range):
            weights = self.model.get_weights()
            losses = []
            for bs in batch_range:
              self.model.fit(x, y, batch_size=bs, epochs=1)
              losses.append(self.model.evaluate(x, y))
              self.model.set_weights(weights)
            return losses
        """,
    # DDPG's target network: a soft update computed on NumPy copies of the
    # trained model's and the target's weights, written into the target.
    "a target network's soft update on NumPy copies": """\
        class Actor:
          def __init__(self, tau):
            self.tau = tau
            self.model = self.network()
            self.target_model = self.network()

          def transfer_weights(self):
            W, target_W = self.model.get_weights(), self.target_model.get_weights()
            for i in range(len(W)):
              target_W[i] = self.tau * W[i] + (1 - self.tau) * target_W[i]
            self.target_model.set_weights(target_W)

          def train(self, states, actions):
            self.model.train_on_batch(states, actions)
            self.transfer_weights()
        """,
}

POSITIVE = {
    # One layer put back after each fit: that layer is frozen.
    "one layer's saved weights put back after each fit": ("""\
        saved = model.layers[0].get_weights()
        for epoch in range(10):
          model.fit(x, y, epochs=1)
          model.layers[0].set_weights(saved)
        """, 4),
    # Some of the stepped variables put back after each step (the rest
    # train): a freeze, whether the loop names them or counts them.
    "some stepped variables restored after the step": (
        NEGATIVE["every stepped variable restored after the step"].replace(
            "for i in range(len(trainable_vars)):\n"
            "              trainable_vars[i].assign",
            "for i in self.frozen:\n              trainable_vars[i].assign"),
        13),
    "the first variables restored after the step": (
        NEGATIVE["every stepped variable restored after the step"].replace(
            "for i in range(len(trainable_vars)):\n"
            "              trainable_vars[i].assign",
            "for i in range(2):\n              trainable_vars[i].assign"),
        13),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_write_that_undoes_or_mirrors_the_step_is_silent(name):
  assert _writes(NEGATIVE[name]) == []


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_write_that_freezes_part_of_the_step_is_found(name):
  code, line = POSITIVE[name]
  assert [f[1] for f in _writes(code)] == [line]
