"""`tfpartial scan`: a linear probe trained in the same `train_step` as
the encoder it reads (a self-supervised model's online evaluation,
shilu10's `ssl-representation-learning`): the contrastive step trains
`encoder_params + proj_head_params`, local names bound to the parts'
`trainable_weights` (by a tuple assignment too), and the probe's step
trains `self.linear_probe.trainable_weights` on the encoder's output.
Both steps run at every call: the encoder trains, nothing is left out.
Silent. A probe whose class trains the encoder in no step (the encoder
restored, a head-only fine-tuning) stays found, at both steps' lists
when the contrastive step trains only the projection head on it."""

import pytest

import scanned

_MODEL = """\
import tensorflow as tf

class ContrastiveModel(tf.keras.Model):
  def __init__(self):
    super().__init__()
    self.encoder = tf.keras.Sequential([tf.keras.layers.Dense(64)])
    self.projection_head = tf.keras.Sequential([tf.keras.layers.Dense(32)])
    self.linear_probe = tf.keras.Sequential([tf.keras.layers.Dense(10)])

  def train_step(self, data):
    (x, labeled_x, labeled_y) = data
    with tf.GradientTape() as tape:
      zi = self.projection_head(self.encoder(x))
      contrastive_loss = tf.reduce_mean(zi)
{bind}
    grads = tape.gradient(contrastive_loss, {listed})
    self.contrastive_optimizer.apply_gradients(zip(grads, {listed}))
    with tf.GradientTape() as tape:
      features = self.encoder(labeled_x)
      class_logits = self.linear_probe(features)
      probe_loss = self.probe_loss(labeled_y, class_logits)
    gradients = tape.gradient(probe_loss, self.linear_probe.trainable_weights)
    self.probe_optimizer.apply_gradients(
        zip(gradients, self.linear_probe.trainable_weights))
    return {{}}
"""

SILENT = {
    "parts bound by a tuple assignment": _MODEL.format(
        bind="    encoder_params, proj_head_params = "
        "self.encoder.trainable_weights, "
        "self.projection_head.trainable_weights",
        listed="encoder_params + proj_head_params"),
    "the encoder bound to a name": _MODEL.format(
        bind="    encoder_params = self.encoder.trainable_weights",
        listed="encoder_params"),
    "the parts listed directly": _MODEL.format(
        bind="", listed="self.encoder.trainable_weights + "
        "self.projection_head.trainable_weights"),
}

FOUND = {
    "the contrastive step trains the projection head only": (_MODEL.format(
        bind="    encoder_params, proj_head_params = "
        "self.encoder.trainable_weights, "
        "self.projection_head.trainable_weights",
        listed="proj_head_params"), [15, 22]),
    "a name bound to the projection head only": (_MODEL.format(
        bind="    head_params = self.projection_head.trainable_weights",
        listed="head_params"), [15, 22]),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_probe_beside_the_encoder_s_own_step_is_silent(name):
  assert scanned.found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_probe_over_an_encoder_no_step_trains_is_found(name):
  code, lines = FOUND[name]
  assert scanned.found(code) == [("var-list-filter", n) for n in lines]
