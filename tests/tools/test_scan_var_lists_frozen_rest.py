"""`tfpartial scan`'s `var-list-filter` where a filter over a Keras
model's `trainable_variables` leaves out only layers the same code froze
whole just before (`layer.trainable = False` over the model's layers, or
over a model built by the same call and sharing them): nothing trainable
is left out, so no finding; a mode's other arm that leaves out loaded
weights by name is the finding (part twenty-four's LEAR and BIN
trainers). Each source is synthetic."""

import scanned

_SHARED = """\
    import tensorflow as tf


    class Trainer:

      def __init__(self, net):
        self.train_vars = []
        self.cls_model, self.dec_model = net.generator()
        self.cls_model.load_weights("cls.h5")
        for layer in self.cls_model.layers:
          layer.trainable = False
        keep = False
        for v in self.dec_model.trainable_variables:
          if "dec" in v.name:
            keep = True
          if keep:
            self.train_vars += [v]

      def step(self, x, y, opt):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean((self.dec_model(x) - y) ** 2)
        grads = tape.gradient(loss, self.train_vars)
        opt.apply_gradients(zip(grads, self.train_vars))
    """


def test_a_filter_after_freezing_the_shared_layers_is_silent():
  assert scanned.found(_SHARED) == []


def test_a_comprehension_after_freezing_the_models_own_layers_is_silent():
  text = """\
      import tensorflow as tf

      def train(model, data, opt):
        for layer in model.layers[:-2]:
          layer.trainable = False
        head = [v for v in model.trainable_variables if "head" in v.name]
        for x, y in data:
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
          grads = tape.gradient(loss, head)
          opt.apply_gradients(zip(grads, head))
      """
  assert scanned.found(text) == []


def test_zipped_layers_frozen_leave_the_filter_silent():
  text = _SHARED.replace(
      "for layer in self.cls_model.layers:",
      "for enc, layer in zip(self.cls_model.layers[:-3],"
      " self.dec_model.layers):").replace(
          "self.cls_model, self.dec_model = net.generator()",
          "self.cls_model = net.classifier()\n"
          "        self.dec_model = net.generator()")
  assert scanned.found(text) == []


def test_a_model_built_apart_keeps_the_filter_a_finding():
  text = _SHARED.replace(
      "self.cls_model, self.dec_model = net.generator()",
      "self.cls_model = net.classifier()\n"
      "        self.dec_model = net.generator()")
  assert scanned.found(text) == [("var-list-filter", 18)]


def test_layers_frozen_after_the_filter_keep_it_a_finding():
  lines = _SHARED.splitlines(keepends=True)
  frozen = lines[9:11]
  text = "".join(lines[:9] + lines[11:17] + frozen + lines[17:])
  assert scanned.found(text) == [("var-list-filter", 15)]


def test_a_trainable_true_loop_is_no_freeze():
  text = _SHARED.replace("layer.trainable = False", "layer.trainable = True")
  assert scanned.found(text) == [("var-list-filter", 17)]


_MODES = """\
    import tensorflow as tf


    class Trainer:

      def __init__(self, config, net, loaded):
        self.train_vars = []
        if config.mode == "explain":
          self.cls_model, self.gen_model = net.generator()
          for layer in self.cls_model.layers:
            layer.trainable = False
          keep = False
          for v in self.gen_model.trainable_variables:
            if "dec" in v.name:
              keep = True
            if keep:
              self.train_vars += [v]
        elif config.mode == "reinforce":
          _, self.cls_model = net.xga()
          injection = True
          for v in self.cls_model.trainable_variables:
            for name in loaded:
              if v.name == name:
                injection = False
            if injection:
              self.train_vars += [v]
            injection = True

      def step(self, x, y, opt):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean((self.cls_model(x) - y) ** 2)
        grads = tape.gradient(loss, self.train_vars)
        opt.apply_gradients(zip(grads, self.train_vars))
    """


def test_the_arm_leaving_out_loaded_weights_is_the_finding():
  assert scanned.found(_MODES) == [("var-list-filter", 26)]


def test_a_freeze_in_another_arm_does_not_silence_the_filter():
  text = _MODES.replace(
      "_, self.cls_model = net.xga()",
      "self.gen_model, self.cls_model = net.xga()")
  assert scanned.found(text) == [("var-list-filter", 26)]
