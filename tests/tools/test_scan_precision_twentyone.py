"""`tfpartial scan` stays silent on a look-alike that part eighteen's
negative codebases showed: AdaIN style transfer whose decoder is trained
on what a layer made with no arguments (`layers.AdaIN()`, a library's
size-free op) makes of a pretrained encoder's features, the encoder made
`trainable=False` in its own class: the op has no weights of its own to
leave out. The twin whose layer between is sized (`Dense(64)`), or whose
encoder trains, is still found. Synthetic sources in the shape of real
code."""

import pytest
import scanned


# The encoder is a fixed VGG feature network; `between` joins its content
# and style features before the decoder.
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
    import layers
    from enc import Encoder
    from dec import Decoder

    class AdaIN(tf.keras.Model):
      def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()
        self.between = {between}
        self.opt = tf.keras.optimizers.Adam(1e-4)

      @tf.function
      def train(self, content, style):
        with tf.GradientTape() as tape:
          c = self.encoder(content)[-1]
          s = self.encoder(style)
          t = self.between({args})
          out = self.decoder(t)
          g = self.encoder(out)
          loss = tf.reduce_mean(tf.square(g[-1] - t))
        grads = tape.gradient(loss, self.decoder.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.decoder.trainable_variables))
        return loss
    """}


@pytest.mark.parametrize("flag, between, args, expected", [
    (", trainable=False", "layers.AdaIN()", "c, s[-1]", []),
    (", trainable=False", "tf.keras.layers.Add()", "[c, s[-1]]", []),
    # A sized layer between: its weights are left at their start.
    (", trainable=False", "tf.keras.layers.Dense(64)", "c",
     [("var-list-filter", "model.py", 23)]),
    # A trainable encoder below the op, left out of the decoder's list.
    ("", "layers.AdaIN()", "c, s[-1]", [("var-list-filter", "model.py", 23)]),
], ids=["size_free_op", "merge_layer", "sized_layer", "trainable_encoder"])
def test_a_size_free_op_on_a_fixed_encoder(flag, between, args, expected):
  files = dict(_ADAIN, **{
      "enc.py": _ADAIN["enc.py"].format(flag=flag),
      "model.py": _ADAIN["model.py"].format(between=between, args=args)})
  assert scanned.in_project(files) == expected


# The same op as the project's own class, reached as Python reaches it
# (`layers.py` star-imports a package whose `__init__` imports it): it
# makes weights only when asked (`use_learnable_params`, off by default),
# so made with no arguments it has none. A class of the project that
# always builds a sized layer has weights, and they are left out.
_OWN_OP = """\
    import tensorflow as tf
    from .norm import Normalization

    class AdaIN(tf.keras.layers.Layer):
      def __init__(self, use_learnable_params=False):
        super().__init__()
        self.use_learnable_params = use_learnable_params

      def build(self, input_shape):
        self.norm = Normalization(center=False, scale=False)
        shape = tf.TensorShape(input_shape)
        if self.use_learnable_params:
          self.linear = tf.keras.layers.Dense(2 * shape[-1])
        {always}

      def call(self, x, y):
        return self.norm(x) * tf.math.reduce_std(y) + tf.reduce_mean(y)
    """
_NORM = """\
    import tensorflow as tf

    class Normalization(tf.keras.layers.Layer):
      def __init__(self, center=True, scale=True):
        super().__init__()
        if center or scale:
          self.bn = tf.keras.layers.BatchNormalization(
              center=center, scale=scale)
        else:
          self.bn = None
    """


@pytest.mark.parametrize("always, expected", [
    ("", []),
    ("self.mix = tf.keras.layers.Dense(shape[-1])",
     [("var-list-filter", "model.py", 23)]),
], ids=["weights_only_when_asked", "weights_always"])
def test_a_size_free_op_of_the_project_on_a_fixed_encoder(always, expected):
  files = dict(_ADAIN, **{
      "enc.py": _ADAIN["enc.py"].format(flag=", trainable=False"),
      "model.py": _ADAIN["model.py"].format(between="layers.AdaIN()",
                                            args="c, s[-1]"),
      "layers.py": "from tf_layers import *\n",
      "tf_layers/__init__.py": "from .denorm import AdaIN\n",
      "tf_layers/denorm.py": _OWN_OP.replace("{always}", always),
      "tf_layers/norm.py": _NORM})
  assert scanned.in_project(files) == expected
