"""`tfpartial scan` (var-list-filter) on the negatives of part thirty:
lists that leave out nothing the step would train.

- A class's own dict of lists read by key (`self.variables['trainable']`
  where `self.variables = {}`, filled with each variable whose own
  `trainable` flag is set; YeongHyeon/Normalizing-Flow-TF2) is the
  entry's values, not a pick from a model's `variables` collection.
  Twin: the entry holds a slice of the model's variables: found there.
- A transformer's pooler left out of one step, the head left out of it
  too but trained by a second step of the same loss (XLM-R fine-tuning
  at two learning rates, moizsaifee/kaggle-jigsaw ... 3rd place): the
  head trains, the pooler gets no gradient (the model reads only the
  per-token output). Twins: the model reads the pooled output, or no
  step trains the head: found.
"""

import scanned

_DICT_ENTRY = """\
    class Agent(object):
      def __init__(self, model):
        self.variables = {}
        self.model = model
        self.variables['trainable'] = ENTRY
        for key in list(self.model.layer.parameters.keys()):
          trainable = self.model.layer.parameters[key].trainable
          if trainable:
            self.variables['trainable'].append(
                self.model.layer.parameters[key])
        self.optimizer = tf.optimizers.RMSprop(1e-3)

      def step(self, x):
        with tf.GradientTape() as tape:
          loss = self.model(x)
        grads = tape.gradient(loss, self.variables['trainable'])
        self.optimizer.apply_gradients(
            zip(grads, self.variables['trainable']))
    """


def test_a_dict_entry_of_variables_kept_by_their_flag_is_silent():
  assert scanned.found(_DICT_ENTRY.replace("ENTRY", "[]")) == []


def test_a_dict_entry_holding_a_slice_of_the_variables_is_found():
  code = _DICT_ENTRY.replace("ENTRY", "model.trainable_variables[-2:]")
  assert scanned.found(code) == [("var-list-filter", 5)]
