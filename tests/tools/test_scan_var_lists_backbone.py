"""`tfpartial scan`'s `var-list-filter` for a frozen backbone written as
two models (part twenty-six's linear evaluations: garder14's SimCLR and
BYOL, wangz10's stage 2): inside a `GradientTape` one model's output
feeds another, and the step differentiates only the second's variables
while the first holds weights of its own (loaded, set untrainable, or
trained by an earlier stage). Silent: a GAN's discriminator step (the
generator has its own step, which calls the discriminator), a teacher
or target network whose output feeds no model, a model trained by
`fit`, and a model with no weights of its own (an augmentation stack).
Each source is synthetic."""

import pytest

import scanned

_STEP = """\
    import tensorflow as tf
    from models import Backbone, Head

    backbone = Backbone()
    head = Head()
    %s
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def evaluate_step(images, labels):
      with tf.GradientTape() as tape:
        features = backbone(images, training=False)
        logits = head(features)
        loss = tf.reduce_mean(tf.square(logits - labels))
      grads = tape.gradient(loss, head.trainable_variables)
      opt.apply_gradients(zip(grads, head.trainable_variables))
      return loss
    """


@pytest.mark.parametrize("weights", [
    "backbone.load_weights('pretrained.h5')",
    "backbone.trainable = False",
], ids=["loaded", "untrainable"])
def test_a_backbone_with_weights_feeding_the_trained_head_is_found(weights):
  assert scanned.found(_STEP % weights) == [("var-list-filter", 15)]


def test_a_loaded_model_called_inside_the_head_call_is_found():
  code = (_STEP % "backbone = tf.keras.models.load_model('enc')").replace(
      "features = backbone(images, training=False)\n"
      "        logits = head(features)", "logits = head(backbone(images))")
  assert scanned.found(code) == [("var-list-filter", 14)]


def test_an_encoder_trained_by_an_earlier_stage_is_found():
  code = """\
      import tensorflow as tf
      from models import Encoder, Classifier

      encoder = Encoder()
      projector = Encoder()
      classifier = Classifier()

      def stage_one(x, y):
        with tf.GradientTape() as tape:
          loss = contrastive(projector(encoder(x, training=True)), y)
        variables = encoder.trainable_variables + projector.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))

      def stage_two(x, y):
        with tf.GradientTape() as tape:
          r = encoder(x, training=False)
          loss = xent(y, classifier(r, training=True))
        grads = tape.gradient(loss, classifier.trainable_variables)
        opt.apply_gradients(zip(grads, classifier.trainable_variables))
      """
  assert scanned.found(code) == [("var-list-filter", 18)]


def test_a_gan_discriminator_step_is_silent():
  code = """\
      import tensorflow as tf
      from models import Generator, Discriminator

      generator = Generator()
      discriminator = Discriminator()
      generator.load_weights('last.h5')

      def train_step(real, noise):
        with tf.GradientTape() as d_tape:
          fake = generator(noise, training=True)
          d_loss = bce(discriminator(real), discriminator(fake))
        d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
        d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
        with tf.GradientTape() as g_tape:
          g_loss = bce_ones(discriminator(generator(noise, training=True)))
        g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
        g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
      """
  assert scanned.found(code) == []


def test_a_teacher_whose_output_is_only_a_target_is_silent():
  code = (_STEP % "backbone.load_weights('teacher.h5')").replace(
      "logits = head(features)", "logits = head(images)").replace(
          "logits - labels", "logits - features")
  assert scanned.found(code) == []


def test_a_backbone_trained_by_fit_is_silent():
  code = _STEP % "backbone.fit(data, epochs=3)"
  assert scanned.found(code) == []


def test_an_augmentation_stack_with_no_weights_is_silent():
  assert scanned.found(_STEP % "") == []


def test_a_target_network_is_silent():
  code = """\
      import tensorflow as tf
      from models import QNetwork

      q_net = QNetwork()
      target_net = QNetwork()
      target_net.load_weights('q.h5')

      def train_step(s, a, r, s2):
        with tf.GradientTape() as tape:
          target = r + 0.99 * tf.reduce_max(target_net(s2), axis=1)
          q = tf.reduce_sum(q_net(s) * a, axis=1)
          loss = tf.reduce_mean(tf.square(tf.stop_gradient(target) - q))
        grads = tape.gradient(loss, q_net.trainable_variables)
        opt.apply_gradients(zip(grads, q_net.trainable_variables))
      """
  assert scanned.found(code) == []
