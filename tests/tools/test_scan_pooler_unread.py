"""`tfpartial scan` (var-list-filter): a BERT pooler left out of a step
is frozen only where the transformer's pooled output is read. The
project's own model returning two heads (`subject, objects =
model(...)`, stanleylsx/relation_extraction) is not the transformer's
second output: the transformer is run in the model's module, which reads
only its per-token output, so the pooler gets no gradient either way.
Twins: the model's module reads the pooled output (`bert(...)[1]`, or
`pooler_output`): the pooler is frozen and reported."""

import textwrap

import pytest

import scanned

_TRAIN = """\
    from engines.model import Model

    def train(dataset):
      model = Model(7)
      optimizer = tf.keras.optimizers.Adam(5e-5)
      for x, mask, subject_labels, object_labels in dataset:
        with tf.GradientTape() as tape:
          subject_predicts, object_predicts = model(x, mask)
          loss = (tf.reduce_mean(bce(subject_predicts, subject_labels)) +
                  tf.reduce_mean(bce(object_predicts, object_labels)))
          variables = model.trainable_variables
          variables = [v for v in variables if 'pooler' not in v.name]
          gradients = tape.gradient(loss, variables)
          optimizer.apply_gradients(zip(gradients, variables))
    """


def _model(read):
  return f"""\
    class Model(tf.keras.Model):
      def __init__(self, labels):
        super().__init__()
        self.bert_model = TFBertModel.from_pretrained('bert-base-chinese')
        self.subject_dense = tf.keras.layers.Dense(2)
        self.object_dense = tf.keras.layers.Dense(2 * labels)

      def call(self, x, mask):
        hidden = self.bert_model(x, attention_mask=mask)
        features = {read}
        return self.subject_dense(features), self.object_dense(features)
    """


def _found(read):
  return scanned.in_project({"engines/__init__.py": "",
                             "engines/model.py": _model(read),
                             "engines/train.py": _TRAIN})


def test_a_pooler_the_models_heads_never_read_is_silent():
  assert _found("hidden[0]") == []


@pytest.mark.parametrize("read", ["hidden[1]", "hidden.pooler_output"])
def test_a_pooler_the_model_reads_is_frozen(read):
  assert _found(read) == [("var-list-filter", "engines/train.py", 12)]


def test_the_models_own_pair_in_one_file_is_silent_too():
  model = textwrap.dedent(_model("hidden[0]"))
  train = textwrap.dedent(_TRAIN).replace(
      "from engines.model import Model\n", "")
  assert scanned.in_project(model + "\n\n" + train) == []
