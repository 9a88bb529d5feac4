"""`tfpartial scan`: a part of a model class whose output a step's
function computes before its `GradientTape` opens (an augmentation stack
run on the batch first, shilu10's SimCLR; a base model whose features
FedScale's trainer takes outside the tape, then a head trained on them)
gets no gradient from that step: the tape never records it, so leaving
its variables out of the step's list leaves out nothing the step could
train. Silent. The same part run inside the tape is left out, and stays
found."""

import pytest

import scanned

_SSL = """\
import tensorflow as tf

class SimCLR(tf.keras.Model):
  def __init__(self, encoder, projection_head, augmenter, linear_probe):
    super().__init__()
    self.encoder = encoder
    self.projection_head = projection_head
    self.classification_augmenter = augmenter
    self.linear_probe = linear_probe

  def train_step(self, data):
    (x, labeled_x, labeled_y) = data
    with tf.GradientTape() as tape:
      zi = self.projection_head(self.encoder(x))
      contrastive_loss = tf.reduce_mean(zi)
    params = self.encoder.trainable_weights + self.projection_head.trainable_weights
    grads = tape.gradient(contrastive_loss, params)
    self.contrastive_optimizer.apply_gradients(zip(grads, params))
{outside}
    with tf.GradientTape() as tape:
{inside}
      features = self.encoder(images)
      class_logits = self.linear_probe(features)
      probe_loss = self.probe_loss(labeled_y, class_logits)
    gradients = tape.gradient(probe_loss, self.linear_probe.trainable_weights)
    self.probe_optimizer.apply_gradients(
        zip(gradients, self.linear_probe.trainable_weights))
    return {{}}
"""

_HEAD = """\
import tensorflow as tf

class Trainer(tf.keras.Model):
  def __init__(self, base, head):
    super().__init__()
    self.base = base
    self.head = head

  def features(self, x):
    return self.base(x)

  def train_step(self, data):
    x, y = data
{outside}
    with tf.GradientTape() as tape:
{inside}
      logits = self.head(feats)
      loss = self.compiled_loss(y, logits)
    grads = tape.gradient(loss, self.head.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.head.trainable_variables))
    return {{}}
"""

_METHODS = """\
import tensorflow as tf

class Trainer(tf.keras.Model):
  def __init__(self, base, head):
    super().__init__()
    self.base = base
    self.head = head

  def call(self, x):
    return self.head(self.base(x))

  def classify(self, feats):
    return self.head(feats)

  def train_step(self, data):
    x, y = data
{outside}
    with tf.GradientTape() as tape:
{inside}
      loss = self.compiled_loss(y, logits)
    grads = tape.gradient(loss, self.head.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.head.trainable_variables))
    return {{}}
"""

SILENT = {
    "an augmenter run before the tape": _SSL.format(
        outside="    images = self.classification_augmenter(labeled_x)",
        inside=""),
    "a base model's features taken before the tape": _HEAD.format(
        outside="    feats = self.base(x)", inside=""),
    # The tape runs a method of the class that calls the head alone.
    "the base before the tape, the head through a method": _METHODS.format(
        outside="    feats = self.base(x)",
        inside="      logits = self.classify(feats)"),
}

FOUND = {
    "the augmenter run inside the tape": (_SSL.format(
        outside="", inside="      images = self.classification_augmenter("
        "labeled_x)"), 25),
    "the base model run inside the tape": (_HEAD.format(
        outside="", inside="      feats = self.base(x)"), 19),
    # `self(x)` runs `call`, which runs the base inside the tape too.
    "the base before the tape and inside it through call": (
        _METHODS.format(outside="    feats = self.base(x)",
                        inside="      logits = self(x)"), 21),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_part_run_before_the_tape_is_not_left_out(name):
  assert scanned.found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_part_run_inside_the_tape_is_left_out(name):
  code, line = FOUND[name]
  assert scanned.found(code) == [("var-list-filter", line)]
