"""`tfpartial scan`'s `var-list-filter` where a `self.` attribute is
grown by `+=` in the arms of a mode's `if`: whole in one arm
(`self.train_vars += self.model.trainable_variables`), filtered in
another (part twenty-four's LEAR trainer, its Reinforce stage leaving
out the weights it loads by name). The finding is at the filter, not at
the whole arm's `+=`, which reads the attribute only to add to it. Each
source is synthetic."""

import scanned

_MODES = """\
    import tensorflow as tf


    class Trainer:

      def __init__(self, config, loaded):
        if config.mode == "learn":
          self.train_vars = []
          self.model = build()
          self.train_vars += self.model.trainable_variables
        elif config.mode == "reinforce":
          self.train_vars = []
          self.model = build()
          for v in self.model.trainable_variables:
            if v.name not in loaded:
              self.train_vars += [v]

      def step(self, x, y, opt):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean((self.model(x) - y) ** 2)
        grads = tape.gradient(loss, self.train_vars)
        opt.apply_gradients(zip(grads, self.train_vars))
    """


def test_the_filter_arm_is_the_finding_not_the_whole_arm():
  assert scanned.found(_MODES) == [("var-list-filter", 16)]


def test_a_filtered_addition_in_the_first_arm_stays_its_own_place():
  text = _MODES.replace(
      "self.train_vars += self.model.trainable_variables",
      "self.train_vars += [v for v in self.model.trainable_variables"
      " if 'head' in v.name]")
  assert scanned.found(text) == [("var-list-filter", 10)]
