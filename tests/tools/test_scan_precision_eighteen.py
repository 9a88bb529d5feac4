"""`tfpartial scan` stays silent on look-alikes that part eighteen's
negative codebases showed: a temperature annealed in a callback from its
own value; Reptile's outer step toward the adapted weights; a decoder
trained under an encoder whose own class makes it `trainable=False`; an
alternating fit whose other variable the loop solves in closed form; a
filter excluding a scope that no code which runs opens. Each twin that
does freeze a part is still found. Synthetic sources in the shape of
real code."""

import pytest
import scanned


_found = scanned.found


# A Gumbel-softmax temperature annealed by a callback after each batch.
_ANNEALED = """\
    import tensorflow as tf
    from tensorflow.keras import backend as K

    class TemperatureAnnealing(tf.keras.callbacks.Callback):
      def __init__(self, temperature, saved, min_temperature=.1,
                   epoch_start=0):
        self.temperature = temperature
        self.saved = saved
        self.min_temperature = min_temperature
        self.epoch_start = epoch_start
        self.epoch = 0

      def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

      def on_batch_end(self, batch, logs=None):
        new_t = K.get_value(self.temperature)
        if self.epoch == self.epoch_start:
          {body}
        K.set_value(self.temperature, {written})
    """


@pytest.mark.parametrize("source, expected", [
    (_ANNEALED.format(
        body="new_t = max(new_t - .01, self.min_temperature)",
        written="K.constant(new_t)"), []),
    # Saved values put into some of its elements after each batch.
    (_ANNEALED.format(body="new_t[:3] = self.saved[:3]", written="new_t"),
     [("write-back", 20)]),
], ids=["annealed", "saved_elements"])
def test_a_value_changed_from_itself_in_a_callback(source, expected):
  assert _found(source) == expected


# Reptile: the weights read out after the inner steps, moved from the
# episode's start toward them by the meta step size, set back.
_REPTILE = """\
    import tensorflow as tf

    def meta_train(base_model, optimizer, tasks, meta_step_size, episodes):
      for episode in range(episodes):
        frac_done = episode / episodes
        cur_meta_step_size = (1 - frac_done) * meta_step_size
        old_vars = base_model.get_weights()
        for images, labels in tasks:
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(base_model(images) - labels)
          grads = tape.gradient(loss, base_model.trainable_weights)
          optimizer.apply_gradients(zip(grads, base_model.trainable_weights))
        new_vars = base_model.get_weights()
        for var in range(len(new_vars)):
          {body}
        base_model.set_weights(new_vars)
    """


@pytest.mark.parametrize("source, expected", [
    (_REPTILE.format(body="new_vars[var] = old_vars[var] + ((new_vars[var] "
                          "- old_vars[var]) * cur_meta_step_size)"), []),
    # The first elements of each weight put back as they were.
    (_REPTILE.format(body="new_vars[var][:5] = old_vars[var][:5]"),
     [("write-back", 16)]),
    # Moved by a per-variable array: only some elements move.
    (_REPTILE.format(body="new_vars[var] = old_vars[var] + (new_vars[var] "
                          "- old_vars[var]) * masks[var]"),
     [("write-back", 16)]),
], ids=["outer_step", "slice_put_back", "masked_step"])
def test_an_outer_step_toward_the_trained_weights(source, expected):
  assert _found(source) == expected


# AdaIN style transfer: a VGG encoder made `trainable=False` in its own
# class, run on the content, the style and the decoder's output.
_ADAIN = {"enc.py": """\
    import tensorflow as tf

    class Encoder(tf.keras.Model):
      def __init__(self):
        super().__init__()
        vgg = tf.keras.applications.VGG19(include_top=False)
        outputs = [vgg.get_layer(n).output for n in ["b1", "b4"]]
        self.model = tf.keras.Model(vgg.input, outputs{flag})

      def call(self, inputs):
        return self.model(inputs)
    """, "dec.py": """\
    import tensorflow as tf

    class Decoder(tf.keras.Model):
      def __init__(self):
        super().__init__()
        self.conv = tf.keras.layers.Conv2D(3, 3)

      def call(self, inputs):
        return self.conv(inputs)
    """, "model.py": """\
    import tensorflow as tf
    from enc import Encoder
    from dec import Decoder

    class AdaIN(tf.keras.Model):
      def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()
        self.opt = tf.keras.optimizers.Adam(1e-4)

      @tf.function
      def train(self, content, style):
        with tf.GradientTape() as tape:
          c = self.encoder(content)[-1]
          s = self.encoder(style)
          out = self.decoder(c + s[-1])
          g = self.encoder(out)
          loss = tf.reduce_mean(tf.square(g[-1] - c))
        grads = tape.gradient(loss, self.decoder.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.decoder.trainable_variables))
        return loss
    """}


@pytest.mark.parametrize("flag, expected", [
    (", trainable=False", []),
    # A trainable encoder under the decoder, left out of its list.
    ("", [("var-list-filter", "model.py", 20)]),
], ids=["frozen_in_its_class", "trainable_encoder"])
def test_a_part_frozen_whole_in_its_own_class(flag, expected):
  files = dict(_ADAIN, **{"enc.py": _ADAIN["enc.py"].format(flag=flag)})
  assert scanned.in_project(files) == expected


# An alternating fit: `Q` by gradient steps, `d` solved from `Q` after
# each one.
_ALTERNATING = """\
    import tensorflow as tf

    def penalty_loss(Q, d):
      return tf.reduce_sum(tf.square(
          tf.matmul(tf.transpose(Q), Q) - tf.linalg.diag(d)))

    def decompose(grads):
      Q_k = tf.Variable(grads)
      d_k = tf.Variable(tf.linalg.diag_part(
          tf.matmul(tf.transpose(grads), grads)))
      optimizer = tf.keras.optimizers.SGD(learning_rate=1e-5, momentum=0.9)
      for i in range(100):
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(tf.square(grads - Q_k)) + penalty_loss(
              Q_k, d_k)
        g = tape.gradient(loss, [Q_k])
        optimizer.apply_gradients(zip(g, [Q_k]))
        {update}
      return Q_k, d_k
    """


@pytest.mark.parametrize("source, expected", [
    (_ALTERNATING.format(update="d_k = 0.5 * tf.linalg.diag_part("
                                "tf.matmul(tf.transpose(Q_k), Q_k))"), []),
    (_ALTERNATING.format(update="d_k.assign(tf.linalg.diag_part("
                                "tf.matmul(tf.transpose(Q_k), Q_k)))"), []),
    # `d_k` never changes: left out of the list, it stays as it was.
    (_ALTERNATING.format(update="print(i)"), [("var-list-filter", 16)]),
], ids=["solved", "assigned", "left_as_it_was"])
def test_variables_the_loop_updates_apart(source, expected):
  assert _found(source) == expected


# A filter excluding the scope of an image extractor that no code which
# runs opens: the features come precomputed, the extractor's builder is
# never called, and the function named after it ignores its `scope`.
_EXCLUDED = """\
    import tensorflow as tf
    slim = tf.contrib.slim

    class Model(object):
      def get_inception(self, images, scope=None):
        with tf.variable_scope(scope or 'image_feature_extractor'):
          return slim.fully_connected(images, 8)

      def get_image_feature_extractor(self, scope='image_feature_extractor'):
        {body}

      def build(self, loss, lr):
        with tf.variable_scope('Model'):
          self.image = self.get_image_feature_extractor(
              scope='image_feature_extractor')
        optimizer = tf.train.AdamOptimizer(lr)
        variables_to_train = tf.trainable_variables(
            scope='(?!.*image_feature_extractor).*')
        return slim.learning.create_train_op(
            loss, optimizer, variables_to_train=variables_to_train)
    """


@pytest.mark.parametrize("source, expected", [
    (_EXCLUDED.format(body="h = tf.reduce_mean(self.images, axis=1)\n"
                           "        return slim.fully_connected(h, 8, "
                           "scope='image_projection')"), []),
    # The extractor built under the scope it is given: left out.
    (_EXCLUDED.format(body="return self.get_inception(self.images, "
                           "scope=scope)"), [("var-list-filter", 17)]),
], ids=["never_opened", "opened"])
def test_a_filter_excluding_a_scope_no_code_opens(source, expected):
  assert _found(source) == expected
