"""`tfpartial scan`'s `var-list-filter` where the list a step trains is a
method of an object a factory builds (`model = build(config)`, one of
several classes of the project) and an override of that method returns
a filter under a flag and every variable otherwise (part sixteen's
image-ad retrieval model, trained residually: only the scope
`confidence` learns). Each source is synthetic."""

import scanned

_BUILT = """\
    import tensorflow as tf


    class Base(object):

      def get_variables_to_train(self):
        return tf.trainable_variables()


    class Residual(Base):

      def __init__(self, options):
        self._options = options

      def build(self, images):
        with tf.variable_scope('confidence'):
          weights = tf.get_variable('weights', [10])
        return images * weights

      def get_variables_to_train(self):
        if self._options.residual_training:
          return tf.trainable_variables('confidence')
        return tf.trainable_variables()


    def build(config):
      if config.which == 'plain':
        return Base()
      return Residual(config)


    def train(config, total_loss):
      model = build(config)
      variables_to_train = model.get_variables_to_train()
      return slim.learning.create_train_op(
          total_loss, optimizer, variables_to_train=variables_to_train)
    """


def test_an_override_of_the_built_class_chosen_by_a_flag_is_found():
  assert scanned.found(_BUILT) == [("var-list-filter", 22)]


def test_an_override_returning_every_variable_stays_silent():
  text = _BUILT.replace("tf.trainable_variables('confidence')",
                        "tf.trainable_variables()")
  assert scanned.found(text) == []


def test_an_override_of_a_class_never_built_stays_silent():
  # The factory builds only the base: the override never runs.
  text = _BUILT.replace("      return Residual(config)\n",
                        "      return Base()\n")
  assert scanned.found(text) == []


# Part sixteen's VCR trainer: a registry of model classes a factory
# calls; each class drops its frozen patterns from the list it trains;
# an adversarial step is built only for models that have its method.
_REGISTERED = """\
    import tensorflow as tf


    class ModelBase(object):

      def get_variables_to_train(self):
        return tf.trainable_variables()


    class Plain(ModelBase):

      def get_variables_to_train(self):
        frozen = [v for v in tf.trainable_variables()
                  if 'FeatureExtractor/' in v.op.name]
        return list(set(tf.trainable_variables()) - set(frozen))


    class Masked(ModelBase):

      def get_variables_to_train(self):
        frozen = [v for v in tf.trainable_variables()
                  if 'Embeddings/' in v.op.name]
        return list(set(tf.trainable_variables()) - set(frozen))


    MODELS = {'plain': Plain, 'masked': Masked}


    def build(name):
      return MODELS[name]()


    def model_fn(name, total_loss, losses):
      model = build(name)
      variables_to_train = model.get_variables_to_train()
      train_op = tf.contrib.training.create_train_op(
          total_loss, optimizer, variables_to_train=variables_to_train)
      if callable(getattr(model, 'get_adversarial_variables_to_train', None)):
        adversarial_loss = -total_loss
        adversarial_variables = model.get_adversarial_variables_to_train()
        adversarial_op = tf.contrib.training.create_train_op(
            adversarial_loss, optimizer,
            variables_to_train=adversarial_variables)
      return train_op
    """


def test_every_registered_class_s_filter_is_found():
  assert sorted(scanned.found(_REGISTERED)) == [
      ("var-list-filter", 15), ("var-list-filter", 21)]


def test_an_adversarial_step_of_the_model_s_own_class_stays_a_pair():
  # The classes have the method the adversarial step is built for: the
  # two steps are a pair's halves, as before.
  text = _REGISTERED.replace(
      "    class ModelBase(object):\n",
      "    class ModelBase(object):\n\n"
      "      def get_adversarial_variables_to_train(self):\n"
      "        return [v for v in tf.trainable_variables()\n"
      "                if v.op.name.startswith('adversarial/')]\n")
  assert scanned.found(text) == []
